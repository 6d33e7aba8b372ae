import { describe, expect, it } from 'vitest';
import {
  EMPTY_TABLE_DIGEST,
  canonicalJson,
  compareCodePoints,
  objectDigest,
  parseLosslessJson,
  pythonFloat,
  rowDigest,
  storageJson,
  tableDigest,
  toJsonText,
} from '../src/index';

/**
 * Expected values were computed once, when these tests were written, with CPython 3:
 *   s = json.dumps(json.loads(input), sort_keys=True)
 *   base64.urlsafe_b64encode(hashlib.sha256(s.encode()).digest()).decode()
 *     .replace('-', 'X').replace('_', 'Y').rstrip('=')
 * i.e. the reference's published algorithm, independently of this code.
 */
const CASES: [input: string, canonical: string, digest: string][] = [
  [
    '{"b": 1, "a": [1, 2.5, "x"], "c": {"z": null, "y": true, "x": false}}',
    '{"a": [1, 2.5, "x"], "b": 1, "c": {"x": false, "y": true, "z": null}}',
    'By78Wt8lkhVmgZeS5YuSDvWPGlO4gDSL9cjrpMTyKIo',
  ],
  [
    '{"nested": {"deep": {"deeper": [{"k": "v"}, [], {}]}}}',
    '{"nested": {"deep": {"deeper": [{"k": "v"}, [], {}]}}}',
    'N7gw57sUBYQ4Wk1SMYZmwGxunUWXUfYscVLvVTlrCGo',
  ],
  [
    '{"text": "h\u00e9llo w\u00f6rld \u2713 \u65e5\u672c", "emoji": "\ud83d\ude00 astral \ud834\udd1e", "ctrl": "tab\\there\\nnl \\u0001 \\u007f /slash \\"q\\" back\\\\"}',
    '{"ctrl": "tab\\there\\nnl \\u0001 \\u007f /slash \\"q\\" back\\\\", "emoji": "\\ud83d\\ude00 astral \\ud834\\udd1e", "text": "h\\u00e9llo w\\u00f6rld \\u2713 \\u65e5\\u672c"}',
    'pAwUO36XL2phuyPE5EZb2XnwUIS5MzmDz24jfHzP4eM',
  ],
  [
    '{"floats": [1.0, 0.5, 1e-05, 0.0001, 1e16, 1e15, 123456789.123, -0.0, 1.5e300, 2.5E-10, 100.0, 1e22, 0.1]}',
    '{"floats": [1.0, 0.5, 1e-05, 0.0001, 1e+16, 1000000000000000.0, 123456789.123, -0.0, 1.5e+300, 2.5e-10, 100.0, 1e+22, 0.1]}',
    'rhb2zWyxu2Hz80UUxe2a06XtrM8CgVzPYuJai923Tic',
  ],
  [
    '{"ints": [0, -0, 1, -17, 9007199254740993, 123456789012345678901234567890, -98765432109876543210]}',
    '{"ints": [0, 0, 1, -17, 9007199254740993, 123456789012345678901234567890, -98765432109876543210]}',
    'kNFEp1ZaskqJv0XXYxlJXRIAjfOQz9FYKeuDRRkiRf4',
  ],
  [
    '{"model": "weave:///acme/proj/object/model:abc123", "rows": "weave:///acme/proj/table/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "op": "weave:///acme/proj/op/predict:XyZ"}',
    '{"model": "weave:///acme/proj/object/model:abc123", "op": "weave:///acme/proj/op/predict:XyZ", "rows": "weave:///acme/proj/table/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}',
    'gs8XkeVmPxPKQGBloyBar4YyhyMOp2FmCVP6mgFJ4po',
  ],
  [
    '{"\\ue000": 1, "\\ud83d\\ude00": 2, "a": 3, "Z": 4, "\\u00e9": 5}',
    '{"Z": 4, "a": 3, "\\u00e9": 5, "\\ue000": 1, "\\ud83d\\ude00": 2}',
    'UACOXR0GfXW4iSX2qyCiyHrJUOOvbV77VtihF1eNdno',
  ],
  [
    '{"_type": "Dataset", "_class_name": "Dataset", "_bases": ["Object", "BaseModel"], "name": "ds", "description": null, "rows": "weave:///e/p/table/abc"}',
    '{"_bases": ["Object", "BaseModel"], "_class_name": "Dataset", "_type": "Dataset", "description": null, "name": "ds", "rows": "weave:///e/p/table/abc"}',
    'XkaVop6YsPrrVnVZCcrp6Es5p1m1YPMHcXWYrII1QWs',
  ],
  ['[1, "two", 3.0]', '[1, "two", 3.0]', 'YMSRnWstDzoY9hl8moHLcFTJ8D0R14kysnNC4xhV7u8'],
  ['"just a string"', '"just a string"', 'PXAd71Sxxs15Wy6Yy6tkFQ9qUHvOBDBAxmLGgu6Y7R4'],
  ['42', '42', 'c0dctApWjo2ooEXO0RATfhWfiQrE2og7axfcZRs6gEk'],
  ['3.0', '3.0', 'pBbqhEIfpXE1FYLaSCNbrIg4CjNXxctakjncfVeQi0s'],
  ['null', 'null', 'dCNOmKYnSYX12vHzasLXiswzlGT5UHA7jAGYkvmCuQs'],
  ['{"inf": 1e400, "ninf": -1e400}', '{"inf": Infinity, "ninf": -Infinity}', 'fFrSGnxeI3rTD4YbWu9JwohL4W3tocJ9wWkeUXoI4Wc'],
];

describe('object digests equal the reference algorithm', () => {
  for (const [input, canonical, digest] of CASES) {
    it(`digests ${input.slice(0, 60)}`, () => {
      const value = parseLosslessJson(input);
      expect(canonicalJson(value)).toBe(canonical);
      expect(objectDigest(value)).toEqual({ digest, json: canonical });
      expect(digest).toMatch(/^[A-Za-z0-9]{43}$/);
    });
  }
});

describe('table digests', () => {
  it('hashes row digests (sorted-key rows) into a hex table digest', () => {
    const rows = [{ a: 1 }, { b: [parseLosslessJson('1.5'), 'x'] }, { a: 1 }];
    const rds = rows.map(rowDigest);
    expect(rds).toEqual([
      'XdhgKMbg1k4iUYb5astpM4ssWXZN95FiEH9cS7NNExA',
      'TplYJadXpFBVqzZrDviDdcmQOCZhCA4YkK9qbkarPCw',
      'XdhgKMbg1k4iUYb5astpM4ssWXZN95FiEH9cS7NNExA',
    ]);
    expect(tableDigest(rds)).toBe('36dd9a53c1d2b87c2b58ca988f076ee2c76d66f7b969521a6ecfe07ba02694f4');
    expect(tableDigest([])).toBe(EMPTY_TABLE_DIGEST);
  });
});

describe('python float repr', () => {
  it('matches repr() at the notation boundaries', () => {
    const cases: [number, string][] = [
      [1, '1.0'],
      [0.1, '0.1'],
      [1e-5, '1e-05'],
      [0.0001, '0.0001'],
      [1e16, '1e+16'],
      [1e15, '1000000000000000.0'],
      [123456789012345680, '1.2345678901234568e+17'],
      [-2.5e-7, '-2.5e-07'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [-0, '-0.0'],
      [Infinity, 'Infinity'],
      [NaN, 'NaN'],
    ];
    for (const [x, s] of cases) expect(pythonFloat(x)).toBe(s);
  });
});

describe('lossless parse and output', () => {
  it('keeps 1.0 a float and big integers exact, and writes them back verbatim', () => {
    const v = parseLosslessJson('{"a":1.0,"b":12345678901234567890123,"c":7,"d":"\\u00e9"}') as Record<string, unknown>;
    expect(v.c).toBe(7);
    expect(toJsonText(v)).toBe('{"a":1.0,"b":12345678901234567890123,"c":7,"d":"é"}');
  });
  it('keeps the last of repeated keys, as Python does', () => {
    expect(canonicalJson(parseLosslessJson('{"a":1,"a":2}'))).toBe('{"a": 2}');
  });
  it('stores non-finite floats as parseable JSON that reads back to the same digest', () => {
    const v = parseLosslessJson('{"x": 1e400}');
    const stored = storageJson(v);
    expect(stored).toBe('{"x": 1e999}');
    expect(canonicalJson(parseLosslessJson(stored))).toBe(canonicalJson(v));
  });
  it('orders keys by code point, not UTF-16 unit', () => {
    expect(['\u{1F600}', '\uE000', 'a'].sort(compareCodePoints)).toEqual(['a', '\uE000', '\u{1F600}']);
  });
});

describe('canonical JSON is JSON', () => {
  it('decodes back to the same value for arbitrary JSON values (property)', async () => {
    const fc = await import('fast-check');
    const noNegZero = (v: unknown): unknown =>
      typeof v === 'number'
        ? Object.is(v, -0)
          ? 0
          : v
        : Array.isArray(v)
          ? v.map(noNegZero)
          : v && typeof v === 'object'
            ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, noNegZero(x)]))
            : v;
    fc.assert(
      fc.property(fc.jsonValue(), (raw) => {
        const v = noNegZero(raw);
        const text = canonicalJson(parseLosslessJson(JSON.stringify(v)));
        expect(JSON.parse(text)).toEqual(v);
        expect(/[^\x20-\x7e]/.test(text)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
