import { describe, expect, it } from 'vitest';
import { useWeft } from './helpers/fixture';

const P = 'acme/objects';

const { api } = useWeft();

/** Posts a raw JSON text body, so floats like 1.0 reach the server as written. */
const createRaw = (objectId: string, valText: string, extra = '') =>
  api.raw('/obj/create', `{"obj": {"project_id": "${P}", "object_id": "${objectId}", "val": ${valText}${extra}}}`);

// Expected digests computed with CPython (json.dumps(json.loads(text), sort_keys=True) → the
// reference's base64url sha256 with -→X, _→Y) when this test was written.
const REFERENCE_CASES: [string, string][] = [
  ['{"b": 1, "a": [1, 2.5, "x"], "c": {"z": null, "y": true, "x": false}}', 'By78Wt8lkhVmgZeS5YuSDvWPGlO4gDSL9cjrpMTyKIo'],
  [
    '{"floats": [1.0, 0.5, 1e-05, 0.0001, 1e16, 1e15, 123456789.123, -0.0, 1.5e300, 2.5E-10, 100.0, 1e22, 0.1]}',
    'rhb2zWyxu2Hz80UUxe2a06XtrM8CgVzPYuJai923Tic',
  ],
  [
    '{"ints": [0, -0, 1, -17, 9007199254740993, 123456789012345678901234567890, -98765432109876543210]}',
    'kNFEp1ZaskqJv0XXYxlJXRIAjfOQz9FYKeuDRRkiRf4',
  ],
  [
    '{"text": "h\\u00e9llo w\\u00f6rld \\u2713 \\u65e5\\u672c", "emoji": "\\ud83d\\ude00 astral \\ud834\\udd1e", "ctrl": "tab\\there\\nnl \\u0001 \\u007f /slash \\"q\\" back\\\\"}',
    'pAwUO36XL2phuyPE5EZb2XnwUIS5MzmDz24jfHzP4eM',
  ],
  [
    '{"model": "weave:///acme/proj/object/model:abc123", "rows": "weave:///acme/proj/table/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "op": "weave:///acme/proj/op/predict:XyZ"}',
    'gs8XkeVmPxPKQGBloyBar4YyhyMOp2FmCVP6mgFJ4po',
  ],
  ['{"\\ue000": 1, "\\ud83d\\ude00": 2, "a": 3, "Z": 4, "\\u00e9": 5}', 'UACOXR0GfXW4iSX2qyCiyHrJUOOvbV77VtihF1eNdno'],
  ['[1, "two", 3.0]', 'YMSRnWstDzoY9hl8moHLcFTJ8D0R14kysnNC4xhV7u8'],
];

const A1_DIGEST = 'XdhgKMbg1k4iUYb5astpM4ssWXZN95FiEH9cS7NNExA';

describe('/obj/create digests', () => {
  it('equal the reference algorithm over HTTP (nested, unicode, floats, big ints, refs)', async () => {
    for (const [i, [text, digest]] of REFERENCE_CASES.entries()) {
      const r = await createRaw(`ref-case-${i}`, text);
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual({ digest, object_id: `ref-case-${i}` });
    }
  });

  it('returns stored values verbatim: 1.0 stays 1.0 and big integers keep their digits', async () => {
    const r = await api.raw(
      '/obj/read',
      JSON.stringify({ project_id: P, object_id: 'ref-case-2', digest: 'kNFEp1ZaskqJv0XXYxlJXRIAjfOQz9FYKeuDRRkiRf4' }),
    );
    expect(r.status).toBe(200);
    expect(r.text).toContain('123456789012345678901234567890');
    const f = await api.raw('/obj/read', JSON.stringify({ project_id: P, object_id: 'ref-case-1', digest: 'latest' }));
    expect(f.text).toContain('[1.0, 0.5, 1e-05');
    // Re-creating from what was read gives the same digest (refs round-trip through clients).
    const valText = /"val":(\{.*\}),"deleted_at"/.exec(f.text)![1]!;
    expect((await createRaw('ref-case-1', valText)).body.digest).toBe('rhb2zWyxu2Hz80UUxe2a06XtrM8CgVzPYuJai923Tic');
  });

  it('derives kind and classes: ops, Dataset, Model subclasses', async () => {
    const op = await api.post('/obj/create', {
      obj: { project_id: P, object_id: 'my_op', val: { _type: 'CustomWeaveType', weave_type: { type: 'Op' }, files: { 'obj.py': 'abc' } } },
    });
    const ds = await api.post('/obj/create', {
      obj: {
        project_id: P,
        object_id: 'ds',
        val: {
          _type: 'Dataset',
          _class_name: 'Dataset',
          _bases: ['Object', 'BaseModel'],
          name: 'ds',
          rows: 'weave:///acme/objects/table/abc',
        },
      },
    });
    const model = await api.post('/obj/create', {
      obj: {
        project_id: P,
        object_id: 'mymodel',
        val: { _type: 'MyModel', _class_name: 'MyModel', _bases: ['Model', 'Object', 'BaseModel'], temperature: 0.5 },
      },
    });
    expect([op.status, ds.status, model.status]).toEqual([200, 200, 200]);
    const read = async (id: string) =>
      (await api.post('/obj/read', { project_id: P, object_id: id, digest: 'latest', metadata_only: true })).body.obj;
    expect(await read('my_op')).toMatchObject({ kind: 'op', base_object_class: null, leaf_object_class: null, val: {} });
    expect(await read('ds')).toMatchObject({ kind: 'object', base_object_class: 'Dataset', leaf_object_class: 'Dataset' });
    expect(await read('mymodel')).toMatchObject({ kind: 'object', base_object_class: 'Model', leaf_object_class: 'MyModel' });
  });

  it('matches the reference digest for a Dataset value', async () => {
    const r = await createRaw(
      'ds-ref',
      '{"_type": "Dataset", "_class_name": "Dataset", "_bases": ["Object", "BaseModel"], "name": "ds", "description": null, "rows": "weave:///e/p/table/abc"}',
    );
    expect(r.body.digest).toBe('XkaVop6YsPrrVnVZCcrp6Es5p1m1YPMHcXWYrII1QWs');
  });

  it('refuses a digest the client expected differently with 409, bad names with 422 (or 400: too long), bad classes with 400', async () => {
    const mismatch = await api.post('/obj/create', { obj: { project_id: P, object_id: 'x', val: { a: 1 }, expected_digest: 'nope' } });
    expect(mismatch.status).toBe(409);
    expect(mismatch.body.reason).toContain('nope');
    // {"a": 1}, digest computed with CPython as above.
    const ok = await createRaw('x', '{"a": 1}', `, "expected_digest": "${A1_DIGEST}"`);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.digest).toBe(A1_DIGEST);
    // The reference: InvalidFieldError for the characters and the empty name, a plain 400 for the length.
    for (const [object_id, status] of [
      ['', 422],
      ['has space', 422],
      ['slash/no', 422],
      ['x'.repeat(129), 400],
    ] as const) {
      const r = await api.post('/obj/create', { obj: { project_id: P, object_id, val: { a: 1 } } });
      expect(r.status, object_id).toBe(status);
      expect(r.body.field).toBe('obj.object_id');
    }
    const nonDict = await api.post('/obj/create', {
      obj: { project_id: P, object_id: 'nd', val: [1], builtin_object_class: 'Leaderboard' },
    });
    expect(nonDict.status).toBe(400);
    const unknown = await api.post('/obj/create', {
      obj: { project_id: P, object_id: 'uk', val: { a: 1 }, builtin_object_class: 'NoSuchClass' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.reason).toContain('Unknown object class');
    const mism = await api.post('/obj/create', {
      obj: {
        project_id: P,
        object_id: 'mm',
        val: { _class_name: 'Dataset', _bases: ['Object', 'BaseModel'] },
        builtin_object_class: 'Leaderboard',
      },
    });
    expect(mism.status).toBe(400);
  });

  it('records the class of a builtin_object_class (and its deprecated alias) in the value', async () => {
    const r = await api.post('/obj/create', {
      obj: { project_id: P, object_id: 'lb', val: { name: 'board', columns: [] }, set_base_object_class: 'Leaderboard' },
    });
    expect(r.status).toBe(200);
    const obj = (await api.post('/obj/read', { project_id: P, object_id: 'lb', digest: r.body.digest })).body.obj;
    expect(obj).toMatchObject({ base_object_class: 'Leaderboard', leaf_object_class: 'Leaderboard' });
    expect(obj.val).toMatchObject({ _type: 'Leaderboard', _class_name: 'Leaderboard', _bases: ['BaseObject', 'BaseModel'], name: 'board' });
  });

  it('publishes a name as another type too, as the 0.52 reference does (no ObjectNameTypeCollision)', async () => {
    await api.post('/obj/create', { obj: { project_id: P, object_id: 'typed', val: { plain: true } } });
    const r = await api.post('/obj/create', {
      obj: { project_id: P, object_id: 'typed', val: { _class_name: 'Dataset', _bases: ['Object', 'BaseModel'] } },
    });
    expect(r.status, r.text).toBe(200);
    const objs = (await api.post('/objs/query', { project_id: P, filter: { object_ids: ['typed'] } })).body.objs;
    expect(objs.map((o: any) => [o.version_index, o.base_object_class, o.is_latest])).toEqual([
      [0, null, 0],
      [1, 'Dataset', 1],
    ]);
  });
});

describe('versions', () => {
  const id = 'versioned';
  const digests: string[] = [];

  it('numbers versions, moves is_latest, and re-creating is idempotent', async () => {
    for (const n of [1, 2, 3]) {
      const r = await api.post('/obj/create', { obj: { project_id: P, object_id: id, val: { n } } });
      expect(r.status).toBe(200);
      digests.push(r.body.digest);
    }
    expect(new Set(digests).size).toBe(3);
    const list = async () => (await api.post('/objs/query', { project_id: P, filter: { object_ids: [id] } })).body.objs;
    let objs = await list();
    expect(objs.map((o: any) => [o.digest, o.version_index, o.is_latest])).toEqual([
      [digests[0], 0, 0],
      [digests[1], 1, 0],
      [digests[2], 2, 1],
    ]);
    // Same value again: same digest, no new version, and it is the latest version again.
    const again = await api.post('/obj/create', { obj: { project_id: P, object_id: id, val: { n: 2 } } });
    expect(again.body.digest).toBe(digests[1]);
    objs = await list();
    expect(objs).toHaveLength(3);
    expect(objs.map((o: any) => [o.version_index, o.is_latest])).toEqual([
      [0, 0],
      [1, 1],
      [2, 0],
    ]);
    expect(objs[1].val).toEqual({ n: 2 });
    expect(objs[1].svc_user_id).toMatch(/^user-/);
  });

  it('reads by digest, latest and v<N>; 404 for unknown objects, digests and versions', async () => {
    const byDigest = await api.post('/obj/read', { project_id: P, object_id: id, digest: digests[2] });
    expect(byDigest.body.obj).toMatchObject({
      object_id: id,
      digest: digests[2],
      version_index: 2,
      val: { n: 3 },
      kind: 'object',
      deleted_at: null,
    });
    expect(byDigest.body.obj.created_at).toMatch(/Z$/);
    expect((await api.post('/obj/read', { project_id: P, object_id: id, digest: 'latest' })).body.obj.digest).toBe(digests[1]);
    expect((await api.post('/obj/read', { project_id: P, object_id: id, digest: 'v0' })).body.obj.val).toEqual({ n: 1 });
    const meta = await api.post('/obj/read', { project_id: P, object_id: id, digest: 'v2', metadata_only: true });
    expect(meta.body.obj.val).toEqual({});
    for (const [object_id, digest] of [
      ['nope', 'latest'],
      [id, 'v9'],
      [id, 'notadigest'],
    ]) {
      const r = await api.post('/obj/read', { project_id: P, object_id, digest });
      expect(r.status).toBe(404);
      expect(r.body.reason).toContain('not found');
    }
    expect((await api.post('/obj/read', { project_id: 'acme/other', object_id: id, digest: 'latest' })).status).toBe(404);
  });

  it('queries with latest_only, is_op, classes, sort, limit/offset, metadata_only and storage size', async () => {
    const latest = (await api.post('/objs/query', { project_id: P, filter: { latest_only: true } })).body.objs;
    expect(latest.every((o: any) => o.is_latest === 1)).toBe(true);
    expect(latest.filter((o: any) => o.object_id === id)).toHaveLength(1);
    const ops = (await api.post('/objs/query', { project_id: P, filter: { is_op: true } })).body.objs;
    expect(ops.map((o: any) => o.object_id)).toEqual(['my_op']);
    const datasets = (await api.post('/objs/query', { project_id: P, filter: { base_object_classes: ['Dataset'] } })).body.objs;
    expect(datasets.map((o: any) => o.object_id).sort()).toEqual(['ds', 'ds-ref', 'typed']);
    const sorted = (
      await api.post('/objs/query', { project_id: P, filter: { latest_only: true }, sort_by: [{ field: 'object_id', direction: 'desc' }] })
    ).body.objs;
    const names = sorted.map((o: any) => o.object_id);
    expect(names).toEqual([...names].sort().reverse());
    const page = (
      await api.post('/objs/query', {
        project_id: P,
        filter: { latest_only: true },
        sort_by: [{ field: 'object_id', direction: 'desc' }],
        limit: 2,
        offset: 1,
      })
    ).body.objs;
    expect(page.map((o: any) => o.object_id)).toEqual(names.slice(1, 3));
    const sized = (
      await api.post('/objs/query', { project_id: P, filter: { object_ids: [id] }, metadata_only: true, include_storage_size: true })
    ).body.objs;
    expect(sized[0].val).toEqual({});
    expect(sized[0].size_bytes).toBe('{"n": 1}'.length);
    const bad = await api.post('/objs/query', { project_id: P, sort_by: [{ field: 'digest', direction: 'asc' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('sort_by[0].field');
  });
});

describe('/refs/read_batch', () => {
  it('reads object refs, follows key/index edges and nested refs, and 404s a missing digest', async () => {
    const inner = await api.post('/obj/create', { obj: { project_id: P, object_id: 'inner', val: { deep: [10, { x: 'y' }] } } });
    const innerRef = `weave:///${P}/object/inner:${inner.body.digest}`;
    const outer = await createRaw('outer', `{"child": "${innerRef}", "n": 1.0}`);
    const outerRef = `weave:///${P}/object/outer:${outer.body.digest}`;
    const r = await api.post('/refs/read_batch', { refs: [outerRef, `${outerRef}/key/child/key/deep/index/1`, innerRef] });
    expect(r.status, r.text).toBe(200);
    expect(r.body.vals).toEqual([{ child: innerRef, n: 1.0 }, { x: 'y' }, { deep: [10, { x: 'y' }] }]);
    expect(r.text).toContain('"n":1.0');
    const missing = await api.post('/refs/read_batch', { refs: [`weave:///${P}/object/outer:nothere`] });
    expect(missing.status).toBe(404);
    expect(missing.body.missing_object_digests).toEqual(['nothere']);
    expect((await api.post('/refs/read_batch', { refs: [`weave:///${P}/table/abc`] })).status).toBe(400);
  });
});
