import { describe, expect, it } from 'vitest';
import { jsonPathOf } from '../src/json-path';
import { parseRef } from '../src/refs';

describe('refs', () => {
  it('parses the reference scheme for objects, ops, tables and calls', () => {
    expect(parseRef('weave:///e/p/object/my-model:abc')).toEqual({
      kind: 'object',
      projectId: 'e/p',
      name: 'my-model',
      version: 'abc',
      extra: [],
    });
    expect(parseRef('weave:///e/p/op/predict:XyZ/attr/rows/id/r1')).toEqual({
      kind: 'op',
      projectId: 'e/p',
      name: 'predict',
      version: 'XyZ',
      extra: ['attr', 'rows', 'id', 'r1'],
    });
    expect(parseRef('weave:///e/p/object/o:d/key/a%2Fb')).toMatchObject({ extra: ['key', 'a/b'] });
    expect(parseRef('weave:///e/p/table/' + 'a'.repeat(64))).toEqual({ kind: 'table', projectId: 'e/p', digest: 'a'.repeat(64) });
    expect(parseRef('weave:///e/p/call/0190')).toEqual({ kind: 'call', projectId: 'e/p', callId: '0190' });
    for (const bad of ['http://x', 'weave:///e/p/object/nodigest', 'weave:///e/p/object/o:d/key', 'weave:///e/p/thing/x:y', 'weave:///e']) {
      expect(parseRef(bad), bad).toBeNull();
    }
  });

  it('turns dotted fields into JSON paths and refuses empty components', () => {
    expect(jsonPathOf('a.b.0.c', 'f')).toBe('$."a"."b"[0]."c"');
    expect(jsonPathOf('a\\.b', 'f')).toBe('$."a.b"');
    for (const bad of ['', '.a', 'a.', 'a..b']) expect(() => jsonPathOf(bad, 'sort_by[0].field')).toThrow(/empty path component/);
  });
});
