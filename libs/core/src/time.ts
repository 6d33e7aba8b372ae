/**
 * Timestamps with microsecond precision. JavaScript's Date keeps only milliseconds, so
 * times travel as integer microseconds since the Unix epoch (exact below 2^53, i.e. for
 * every date until the year 2255) and are parsed and printed here without going through Date's
 * precision limit.
 */

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Parses ISO 8601 (with `Z`, an offset, or naive = UTC) into epoch microseconds; null if invalid. */
export function parseTimestampMicros(s: string): number | null {
  const fast = parseCommonTimestamp(s);
  return fast === undefined ? parseTimestampGeneral(s) : fast;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** The two-digit number at `i`, or -1. */
function two(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * The form SDKs send (`YYYY-MM-DDTHH:MM:SS[.fraction]Z`, or `+00:00`), parsed without a regex
 * or a Date: a number, null when it is that form but no real date-time, undefined for any other
 * form (the general parser decides).
 */
function parseCommonTimestamp(s: string): number | null | undefined {
  const n = s.length;
  if (
    n < 20 ||
    s.charCodeAt(4) !== 45 ||
    s.charCodeAt(7) !== 45 ||
    s.charCodeAt(10) !== 84 ||
    s.charCodeAt(13) !== 58 ||
    s.charCodeAt(16) !== 58
  ) {
    return undefined;
  }
  const century = two(s, 0),
    yy = two(s, 2),
    month = two(s, 5),
    day = two(s, 8);
  const hour = two(s, 11),
    minute = two(s, 14),
    second = two(s, 17);
  if (century < 0 || yy < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  let i = 19;
  let micros = 0;
  if (s.charCodeAt(i) === 46 /* . */) {
    const start = ++i;
    for (let scale = 100_000; i < n; i++) {
      const d = s.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      micros += d * scale;
      scale = Math.floor(scale / 10);
    }
    if (i === start) return undefined;
  }
  const rest = n - i;
  if (!((rest === 1 && s.charCodeAt(i) === 90) /* Z */ || (rest === 6 && s.endsWith('+00:00')))) return undefined;
  if (second > 59) return undefined; // a leap second: the general parser's rule applies
  const year = century * 100 + yy;
  if (year < 100) return undefined; // Date.UTC's two-digit years: the general parser's rule applies
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59) return null;
  if (day > (month === 2 && isLeap(year) ? 29 : MONTH_DAYS[month - 1]!)) return null;
  return (daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second) * 1_000_000 + micros;
}

/** Every ISO 8601 form we take (regex and Date); the fast path above must agree with it. */
export function parseTimestampGeneral(s: string): number | null {
  const m = ISO_RE.exec(s.trim());
  if (!m) return null;
  // The regex makes the date groups mandatory; the time groups default to zero.
  const [, y = '', mo = '', d = '', h = '0', mi = '0', sec = '0', frac = '', tz] = m;
  const year = +y,
    month = +mo,
    day = +d,
    hour = +h,
    minute = +mi,
    second = +sec;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  const ms = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59));
  if (Number.isNaN(ms)) return null;
  const check = new Date(ms);
  if (check.getUTCDate() !== day) return null; // e.g. Feb 30
  let micros = ms * 1000 + Number((frac + '000000').slice(0, 6));
  if (tz && tz !== 'Z' && tz !== 'z') {
    const sign = tz[0] === '-' ? -1 : 1;
    const digits = tz.slice(1).replace(':', '');
    const offMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
    micros -= sign * offMin * 60_000_000;
  }
  return micros;
}

/** Epoch microseconds from a nanosecond count given as string/bigint (OTLP), without precision loss. */
export function nanosToMicros(nanos: string | bigint | number): number {
  const n = typeof nanos === 'bigint' ? nanos : BigInt(typeof nanos === 'number' ? Math.trunc(nanos) : nanos);
  return Number(n / 1000n);
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

const two0 = (n: number) => (n < 10 ? '0' + n : '' + n);

/** `YYYY-MM-DD HH:MM:SS.ffffff` in UTC: the text form ClickHouse's DateTime64(6) accepts and returns. */
export function microsToClickHouse(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000);
  return `${dateTimeText(seconds, ' ')}.${pad(micros - seconds * 1_000_000, 6)}`;
}

/**
 * ISO 8601 with `Z`, microseconds kept, the fraction omitted when zero and given as
 * milliseconds when it has no finer digits (how the reference's pydantic serialises datetimes).
 */
export function microsToIso(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000);
  const frac = micros - seconds * 1_000_000;
  const text = dateTimeText(seconds, 'T');
  if (frac === 0) return text + 'Z';
  return frac % 1000 === 0 ? `${text}.${pad(frac / 1000, 3)}Z` : `${text}.${pad(frac, 6)}Z`;
}

/** `YYYY-MM-DD<sep>HH:MM:SS` in UTC of epoch seconds, without Date (H. Hinnant's civil_from_days). */
function dateTimeText(seconds: number, sep: string): string {
  const days = Math.floor(seconds / 86_400);
  let sod = seconds - days * 86_400;
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(sod / 3600);
  sod -= hour * 3600;
  const minute = Math.floor(sod / 60);
  const second = sod - minute * 60;
  return `${pad(year, 4)}-${two0(month)}-${two0(day)}${sep}${two0(hour)}:${two0(minute)}:${two0(second)}`;
}

/**
 * Epoch microseconds of ClickHouse's `YYYY-MM-DD HH:MM:SS[.ffffff]` text (UTC), as
 * microsToClickHouse writes it; null when it is not that form or no real date-time. Read without
 * a regex or a Date: binary inserts (RowBinary) carry times as integers.
 */
export function clickHouseToMicros(s: string): number | null {
  const n = s.length;
  if (
    n < 19 ||
    s.charCodeAt(4) !== 45 ||
    s.charCodeAt(7) !== 45 ||
    s.charCodeAt(10) !== 32 ||
    s.charCodeAt(13) !== 58 ||
    s.charCodeAt(16) !== 58
  ) {
    return null;
  }
  const century = two(s, 0),
    yy = two(s, 2),
    month = two(s, 5),
    day = two(s, 8),
    hour = two(s, 11),
    minute = two(s, 14),
    second = two(s, 17);
  if (
    century < 0 ||
    yy < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 59
  ) {
    return null;
  }
  const year = century * 100 + yy;
  if (day > (month === 2 && isLeap(year) ? 29 : MONTH_DAYS[month - 1]!)) return null;
  let micros = 0;
  if (n > 19) {
    if (s.charCodeAt(19) !== 46 /* . */ || n === 20 || n > 26) return null;
    let scale = 100_000;
    for (let i = 20; i < n; i++, scale /= 10) {
      const d = s.charCodeAt(i) - 48;
      if (d < 0 || d > 9) return null;
      micros += d * scale;
    }
  }
  return (daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second) * 1_000_000 + micros;
}

/** Converts ClickHouse's `YYYY-MM-DD HH:MM:SS[.fff...]` text (UTC) to ISO 8601 with `Z`. */
export function clickHouseToIso(s: string): string {
  const [datePart, timePart = '00:00:00'] = s.split(' ');
  const [hms, rawFrac = ''] = timePart.split('.');
  const frac = rawFrac.replace(/0+$/, '');
  return `${datePart}T${hms}${frac ? '.' + frac.padEnd(frac.length <= 3 ? 3 : 6, '0') : ''}Z`;
}

export function nowMicros(): number {
  return Date.now() * 1000;
}
