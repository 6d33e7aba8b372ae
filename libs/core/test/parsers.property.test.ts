import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError, ConfigError, loadConfig, microsToIso, parseAuthorization, parseProjectId, parseTimestampMicros } from '../src/index';

/** Runs `f`; anything thrown must be an ApiError with `status` (the typed error of the edge). */
function onlyApiError<T>(f: () => T, status: number): T | undefined {
  try {
    return f();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(status);
    return undefined;
  }
}

describe('Authorization header parsing (property)', () => {
  it('never throws anything but a 401, for any header and scheme', () => {
    fc.assert(
      fc.property(
        fc.option(fc.string({ unit: 'binary' }), { nil: undefined }),
        fc.constantFrom('basic' as const, 'bearer' as const),
        (h, scheme) => {
          const c = onlyApiError(() => parseAuthorization(h, scheme), 401);
          if (c) expect(c.key.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 600 },
    );
  });

  it('recovers the key of Basic <user>:<key> whatever the user name, and of Bearer <key>', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme' }).filter((u) => !u.includes(':')),
        fc.string({ unit: 'grapheme', minLength: 1 }),
        (user, key) => {
          const basic = `Basic ${Buffer.from(`${user}:${key}`, 'utf8').toString('base64')}`;
          // Either scheme, whichever one the endpoint is given.
          for (const expected of ['basic', 'bearer'] as const) {
            expect(parseAuthorization(basic, expected).key).toBe(key);
            if (key.trim()) expect(parseAuthorization(`Bearer ${key}`, expected).key).toBe(key.trim());
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('timestamp parsing (property)', () => {
  it('never throws, and returns null or an integer, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const r = parseTimestampMicros(s);
        if (r !== null) expect(Number.isInteger(r)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('round-trips every instant with microseconds through its ISO form', () => {
    const min = Date.UTC(1970, 0, 1) * 1000;
    const max = Date.UTC(2200, 0, 1) * 1000;
    fc.assert(
      fc.property(fc.integer({ min, max }), (micros) => {
        expect(parseTimestampMicros(microsToIso(micros))).toBe(micros);
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with Date on millisecond ISO strings', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }), (d) => {
        expect(parseTimestampMicros(d.toISOString())).toBe(d.getTime() * 1000);
      }),
    );
  });
});

describe('project ids (property)', () => {
  it('accepts exactly <entity>/<project> with non-empty parts', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const p = parseProjectId(s);
        if (p) expect(`${p.entity}/${p.project}`).toBe(s);
        else expect(s.split('/').length !== 2 || s.startsWith('/') || s.endsWith('/')).toBe(true);
      }),
      { numRuns: 600 },
    );
  });
});

describe('configuration (property)', () => {
  const names = [
    'PORT',
    'LOG_LEVEL',
    'WEFT_BUS',
    'WEFT_MAX_JSON_DEPTH',
    'WEFT_RATE_LIMIT_MAX',
    'WEFT_BODY_LIMIT_BYTES',
    'CLICKHOUSE_URL',
    'WEFT_AUTH_CACHE_TTL_MS',
    'WEFT_BOOTSTRAP_API_KEY',
  ];
  it('either loads or throws a ConfigError naming a variable, for any environment', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), fc.oneof(fc.string(), fc.integer().map(String), fc.constant(''))), (env) => {
        try {
          const c = loadConfig(env);
          expect(c.WEFT_MAX_JSON_DEPTH).toBeGreaterThanOrEqual(2);
          expect(c.WEFT_RATE_LIMIT_MAX).toBeGreaterThanOrEqual(0);
        } catch (e) {
          expect(e).toBeInstanceOf(ConfigError);
          expect(names.some((n) => (e as Error).message.includes(n))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
