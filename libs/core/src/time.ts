/**
 * Timestamps with microsecond precision. JavaScript's Date keeps only milliseconds, so
 * times travel as integer microseconds since the Unix epoch (exact below 2^53, i.e. for
 * every date until the year 2255) and are parsed and printed here without going through Date's
 * precision limit.
 */

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Parses ISO 8601 (with `Z`, an offset, or naive = UTC) into epoch microseconds; null if invalid. */
export function parseTimestampMicros(s: string): number | null {
  const m = ISO_RE.exec(s.trim());
  if (!m) return null;
  // The regex makes the date groups mandatory; the time groups default to zero.
  const [, y = '', mo = '', d = '', h = '0', mi = '0', sec = '0', frac = '', tz] = m;
  const year = +y, month = +mo, day = +d, hour = +h, minute = +mi, second = +sec;
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

function splitMicros(micros: number): { date: Date; frac: number } {
  const ms = Math.floor(micros / 1000);
  return { date: new Date(ms), frac: micros - Math.floor(micros / 1_000_000) * 1_000_000 };
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

/** `YYYY-MM-DD HH:MM:SS.ffffff` in UTC: the text form ClickHouse's DateTime64(6) accepts and returns. */
export function microsToClickHouse(micros: number): string {
  const { date, frac } = splitMicros(micros);
  return (
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)} ` +
    `${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}.${pad(frac, 6)}`
  );
}

/**
 * ISO 8601 with `Z`, microseconds kept, the fraction omitted when zero (how the reference's
 * pydantic serialises datetimes).
 */
export function microsToIso(micros: number): string {
  const ch = microsToClickHouse(micros);
  return clickHouseToIso(ch);
}

/** Converts ClickHouse's `YYYY-MM-DD HH:MM:SS[.fff...]` text (UTC) to ISO 8601 with `Z`. */
export function clickHouseToIso(s: string): string {
  const [datePart, timePart = '00:00:00'] = s.split(' ');
  let [hms, frac = ''] = timePart.split('.');
  frac = frac.replace(/0+$/, '');
  return `${datePart}T${hms}${frac ? '.' + frac.padEnd(frac.length <= 3 ? 3 : 6, '0') : ''}Z`;
}

export function nowMicros(): number {
  return Date.now() * 1000;
}
