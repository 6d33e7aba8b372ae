/**
 * Oversized call values (WEFT_MAX_VALUE_BYTES): a member of a call's inputs, attributes, output
 * or OTel span dump whose JSON is over the limit is stored as a marker holding its original
 * size and the start of its text, instead of the call being refused or the value lost silently.
 */

/** The member that marks a value weft truncated (an object with it is a marker, not the value). */
export const TRUNCATED_MARKER = '_weft_truncated';

export interface TruncatedValue {
  [TRUNCATED_MARKER]: true;
  /** Bytes of the value's JSON as sent. */
  original_bytes: number;
  /** The value's start: a string's own text, otherwise its JSON text, cut on a character boundary. */
  preview: string;
}

/** Room the marker's own members and the JSON escapes of its preview may take beyond the preview. */
const MARKER_OVERHEAD = 256;

const encoder = new TextEncoder();

/** The longest prefix of `text` whose UTF-8 is at most `bytes` bytes (never half a character). */
function utf8Prefix(text: string, bytes: number): string {
  if (text.length * 3 <= bytes) return text;
  const { read } = encoder.encodeInto(text, new Uint8Array(Math.max(0, bytes)));
  return text.slice(0, read);
}

/** UTF-8 bytes of a JSON text (its length in characters is a lower bound, three times it an upper one). */
function jsonBytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** `value` if its JSON (`json`) is within `maxBytes`, else its marker. */
function fitOrMark(value: unknown, json: string, maxBytes: number): unknown {
  if (json.length <= maxBytes / 3) return value;
  const bytes = jsonBytes(json);
  if (bytes <= maxBytes) return value;
  // Half the room: JSON escapes may double the preview's size, and the marker stays within the limit.
  const previewBytes = Math.max(0, Math.floor((maxBytes - MARKER_OVERHEAD) / 2));
  const marker: TruncatedValue = {
    [TRUNCATED_MARKER]: true,
    original_bytes: bytes,
    preview: utf8Prefix(typeof value === 'string' ? value : json, previewBytes),
  };
  return marker;
}

/**
 * A call value as it is stored: a plain object keeps its members, each over `maxBytes` (as
 * JSON) replaced by its marker; any other value over `maxBytes` becomes a marker itself.
 * `json` is the value's JSON text, already made by the caller: when it is within the limit
 * nothing else is done (the common case costs one length check). Returns the value to store
 * and its JSON. `maxBytes` 0: no limit.
 */
export function truncateOversized(value: unknown, json: string, maxBytes: number): { value: unknown; json: string } {
  if (maxBytes <= 0 || json.length <= maxBytes / 3 || jsonBytes(json) <= maxBytes) return { value, json };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const marked = fitOrMark(value, json, maxBytes);
    return { value: marked, json: JSON.stringify(marked) };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const memberJson = JSON.stringify(v);
    // undefined members vanish from JSON, as they would have.
    out[k] = memberJson === undefined ? v : fitOrMark(v, memberJson, maxBytes);
  }
  return { value: out, json: JSON.stringify(out) };
}
