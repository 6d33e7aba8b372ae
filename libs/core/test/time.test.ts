import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clickHouseToIso,
  clickHouseToMicros,
  microsToClickHouse,
  microsToIso,
  nanosToMicros,
  parseTimestampGeneral,
  parseTimestampMicros,
} from '../src/time';

describe('timestamps', () => {
  it('parses ISO 8601 with Z, offsets and naive times, keeping microseconds', () => {
    expect(parseTimestampMicros('2024-05-01T12:00:00.123456Z')).toBe(Date.UTC(2024, 4, 1, 12) * 1000 + 123456);
    expect(parseTimestampMicros('2024-05-01T14:00:00+02:00')).toBe(Date.UTC(2024, 4, 1, 12) * 1000);
    expect(parseTimestampMicros('2024-05-01T12:00:00')).toBe(Date.UTC(2024, 4, 1, 12) * 1000);
    expect(parseTimestampMicros('2024-05-01')).toBe(Date.UTC(2024, 4, 1) * 1000);
    expect(parseTimestampMicros('2024-05-01T12:00:00.1234567891Z')).toBe(Date.UTC(2024, 4, 1, 12) * 1000 + 123456);
  });
  it('rejects what is not a date-time', () => {
    for (const bad of ['', 'yesterday', '2024-13-01', '2024-02-30T00:00:00Z', '2024-05-01T25:00:00Z', '12:00']) {
      expect(parseTimestampMicros(bad), bad).toBeNull();
    }
  });
  it('prints ClickHouse and ISO forms', () => {
    const m = Date.UTC(2024, 4, 1, 12) * 1000 + 500;
    expect(microsToClickHouse(m)).toBe('2024-05-01 12:00:00.000500');
    expect(microsToIso(m)).toBe('2024-05-01T12:00:00.000500Z');
    expect(microsToIso(Date.UTC(2024, 4, 1) * 1000)).toBe('2024-05-01T00:00:00Z');
    expect(clickHouseToIso('2024-05-01 12:00:00.120000')).toBe('2024-05-01T12:00:00.120Z');
    expect(clickHouseToIso('2024-05-01 12:00:00.123')).toBe('2024-05-01T12:00:00.123Z');
  });
  it('prints ISO directly as it reads through the ClickHouse form, for any time', () => {
    expect(microsToIso(Date.UTC(2024, 4, 1, 12) * 1000 + 120_000)).toBe('2024-05-01T12:00:00.120Z');
    expect(microsToIso(Date.UTC(2024, 4, 1, 12) * 1000 + 123_400)).toBe('2024-05-01T12:00:00.123400Z');
    const micros = fc.oneof(
      fc.integer({ min: -62_135_596_800_000_000, max: 253_402_300_799_999_999 }), // years 1–9999
      fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => ms * 1000), // whole milliseconds
      fc.integer({ min: 0, max: 4_102_444_800 }).map((s) => s * 1_000_000), // whole seconds
    );
    fc.assert(fc.property(micros, (m) => microsToIso(m) === clickHouseToIso(microsToClickHouse(m))));
  });
  it('reads the ClickHouse form back to the same microseconds', () => {
    // 1900 (DateTime64's first year) to 2255 (microseconds exact below 2^53).
    const micros = fc.integer({ min: -2_208_988_800_000_000, max: Number.MAX_SAFE_INTEGER });
    fc.assert(fc.property(micros, (m) => clickHouseToMicros(microsToClickHouse(m)) === m));
    expect(clickHouseToMicros('2024-05-01 12:00:00')).toBe(Date.UTC(2024, 4, 1, 12) * 1000);
    expect(clickHouseToMicros('2024-05-01 12:00:00.5')).toBe(Date.UTC(2024, 4, 1, 12) * 1000 + 500_000);
    expect(clickHouseToMicros('2024-02-29 00:00:00.000001')).toBe(Date.UTC(2024, 1, 29) * 1000 + 1);
    for (const bad of [
      '',
      '2024-05-01T12:00:00',
      '2024-05-01 12:00:00.',
      '2024-05-01 12:00:00.1234567',
      '2023-02-29 00:00:00',
      '2024-05-01 24:00:00',
      '2024-05-01 12:00:0x',
    ]) {
      expect(clickHouseToMicros(bad), bad).toBeNull();
    }
  });
  it('converts OTLP nanoseconds without precision loss', () => {
    expect(nanosToMicros('1714564800123456789')).toBe(1714564800123456);
    expect(nanosToMicros(1714564800123456789n)).toBe(1714564800123456);
  });
});

describe('timestamps: the fast paths agree with the general ones', () => {
  const two = (n: number) => String(n).padStart(2, '0');
  it('parses the common form exactly as the general parser does (valid or not)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        fc.integer({ min: 0, max: 24 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 61 }),
        fc.stringMatching(/^(\.\d{1,9})?$/),
        fc.constantFrom('Z', '+00:00', 'z', '+01:00', ' Z', ''),
        (y, mo, d, h, mi, s, frac, tz) => {
          const text = `${String(y).padStart(4, '0')}-${two(mo)}-${two(d)}T${two(h)}:${two(mi)}:${two(s)}${frac}${tz}`;
          expect(parseTimestampMicros(text), text).toBe(parseTimestampGeneral(text));
        },
      ),
      { numRuns: 5000 },
    );
  });
  it('prints ClickHouse time as Date would, for any instant of years 1–9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_135_596_800_000_000, max: 253_402_300_799_999_999 }), (micros) => {
        const ms = Math.floor(micros / 1000);
        const d = new Date(ms);
        const frac = micros - Math.floor(micros / 1_000_000) * 1_000_000;
        const want = `${String(d.getUTCFullYear()).padStart(4, '0')}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}.${String(frac).padStart(6, '0')}`;
        expect(microsToClickHouse(micros)).toBe(want);
      }),
      { numRuns: 5000 },
    );
  });
});
