import { describe, expect, it } from 'vitest';
import { clickHouseToIso, microsToClickHouse, microsToIso, nanosToMicros, parseTimestampMicros } from '../src/time';

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
  it('converts OTLP nanoseconds without precision loss', () => {
    expect(nanosToMicros('1714564800123456789')).toBe(1714564800123456);
    expect(nanosToMicros(1714564800123456789n)).toBe(1714564800123456);
  });
});
