import type { CallPartRow } from '@weft/store';

/**
 * Server-side redaction of sensitive data (a project's `pii-v1` policy, Weave's
 * /project/sensitive_data_settings): e-mail addresses, phone numbers, credit-card numbers, US
 * social security numbers, IBANs and IP addresses in a new call's inputs, output, attributes,
 * OTel span dump and exception are replaced by the entity's name in angle brackets, as the Weave
 * SDK's own (client-side, Presidio) redaction writes them: `<EMAIL_ADDRESS>`. Pattern-based:
 * names of people and places (Presidio's NLP recognizers) are not found.
 */
export const PII_POLICIES = ['off', 'pii-v1'] as const;
export type PiiPolicy = (typeof PII_POLICIES)[number];

interface Recognizer {
  entity: string;
  pattern: RegExp;
  /** A check of the match beyond its shape (a checksum, a digit count); absent: the shape suffices. */
  valid?: (match: string) => boolean;
}

const digitsOf = (s: string) => s.replace(/\D/g, '');

/** The Luhn checksum every payment card number satisfies. */
function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Card numbers of the major schemes: their issuer prefixes (a millisecond timestamp, starting with 1, is none), 13–19 digits, Luhn-valid. */
const CARD_PREFIX = /^(?:4|5[1-5]|2[2-7]|3[47]|3(?:0[0-5]|[68])|6(?:011|5|4[4-9]))/;

/** ISO 13616: the country letters and check digits moved to the end, letters as numbers, mod 97 is 1. */
function ibanValid(text: string): boolean {
  const s = text.replace(/ /g, '');
  if (s.length < 15 || s.length > 34) return false;
  const moved = s.slice(4) + s.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const v = ch >= 'A' ? String(ch.charCodeAt(0) - 55) : ch;
    for (const digit of v) rest = (rest * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return rest === 1;
}

/** In the order they are applied: a longer, more specific shape first, so a card number is not taken for a phone number. */
const RECOGNIZERS: Recognizer[] = [
  { entity: 'EMAIL_ADDRESS', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g },
  { entity: 'IBAN_CODE', pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/g, valid: ibanValid },
  {
    entity: 'CREDIT_CARD',
    pattern: /(?<![\w.-])\d(?:[ -]?\d){12,18}(?![\w-])/g,
    valid: (m) => {
      const d = digitsOf(m);
      return d.length >= 13 && d.length <= 19 && CARD_PREFIX.test(d) && luhn(d);
    },
  },
  { entity: 'US_SSN', pattern: /(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])/g },
  {
    entity: 'PHONE_NUMBER',
    // International (+country code) or North American with separators: a bare run of digits (an id, a timestamp) is none.
    pattern:
      /(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}|\(\d{3}\) ?\d{3}[ .-]\d{4}|\d{3}[.-]\d{3}[.-]\d{4})(?![\w])/g,
    valid: (m) => {
      const n = digitsOf(m).length;
      return n >= 8 && n <= 15;
    },
  },
  {
    entity: 'IP_ADDRESS',
    pattern: /(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w.])/g,
  },
];

/** Can `text` hold anything a recognizer finds (an `@`, or a digit)? Most strings of a trace can be skipped on this. */
const mayHoldPii = (text: string): boolean => /[@\d]/.test(text);

/** `text` with every sensitive value found replaced by `<ENTITY>`. */
export function redactText(text: string): string {
  if (!mayHoldPii(text)) return text;
  let out = text;
  for (const r of RECOGNIZERS) {
    out = out.replace(r.pattern, (m) => (r.valid && !r.valid(m) ? m : `<${r.entity}>`));
  }
  return out;
}

/** A JSON string literal, escapes included. */
const STRING_LITERAL = /"(?:[^"\\]|\\.)*"/g;

/**
 * A JSON text with its string values redacted (object keys are kept, as the Weave SDK keeps
 * them). Each literal that may hold something is decoded, redacted and encoded again, so an
 * escape next to a match (`\nalice@example.com`) never leaves the JSON broken.
 */
export function redactJsonText(json: string): string {
  if (!mayHoldPii(json)) return json;
  return json.replace(STRING_LITERAL, (literal, at: number) => {
    if (!mayHoldPii(literal)) return literal;
    // A key is followed by its colon (the dumps are compact JSON; whitespace skipped anyway).
    let next = at + literal.length;
    while (json[next] === ' ' || json[next] === '\n' || json[next] === '\t' || json[next] === '\r') next++;
    if (json[next] === ':') return literal;
    const value = JSON.parse(literal) as string;
    const redacted = redactText(value);
    return redacted === value ? literal : JSON.stringify(redacted);
  });
}

const redactDump = (dump: string | null | undefined) => (dump == null ? dump : redactJsonText(dump));

/** A call part with its values redacted: inputs, output, attributes, the OTel span dump and the exception text. */
export function redactCallPart(row: CallPartRow): CallPartRow {
  return {
    ...row,
    inputs_dump: redactDump(row.inputs_dump),
    output_dump: redactDump(row.output_dump),
    attributes_dump: redactDump(row.attributes_dump),
    otel_dump: redactDump(row.otel_dump),
    exception: row.exception == null ? row.exception : redactText(row.exception),
  };
}

/** The parts with those of the projects in `projects` redacted (the others as they are). */
export function redactCallParts(rows: CallPartRow[], projects: ReadonlySet<string> | readonly string[] | undefined): CallPartRow[] {
  if (!projects) return rows;
  const set = projects instanceof Set ? projects : new Set(projects as readonly string[]);
  if (set.size === 0) return rows;
  return rows.map((r) => (set.has(r.project_id) ? redactCallPart(r) : r));
}
