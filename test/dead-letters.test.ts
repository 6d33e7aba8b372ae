import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeadLetters, TOPICS } from '@weft/bus';
import { callPartCodec, callPartMessage, type CallPartEnvelope } from '@weft/ingest';
import { endPart, startPart, wholeCallPart } from '@weft/store';
import { Client } from './helpers/client';
import { clientFor, createKey } from './helpers/keys';
import { REPO_ROOT } from './helpers/paths';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

/**
 * The ingest log's dead letters, replayed through the normal write path into a query result.
 * Two dead letters are put in a data directory's ingest log as the log bus writes them (what the
 * store refused for good); the server started on it lists them, shows one with its call part,
 * replays it (once: a second replay publishes nothing), and discards the other.
 */
const P = 'dl/replayed';
const TS = '2024-06-01T00:00:00Z';
const ID = '0199eeee-0000-7000-8000-000000000001';
const OTHER = '0199eeee-0000-7000-8000-000000000002';
const dataDir = newDataDir('dead-letters');
let weft: RunningWeft;
let api: Client;

function call(id: string) {
  const start = startPart(
    { project_id: P, id, trace_id: id, op_name: 'refused-once', started_at: TS, inputs: { n: 1 }, attributes: {} },
    'u-dl',
    1,
  );
  return callPartMessage(wholeCallPart(start, endPart({ project_id: P, id, ended_at: TS, output: 'ok', summary: {} }, 1))).value;
}

beforeAll(async () => {
  // As the all-in-one's log bus writes them (create.ts: <WEFT_DATA_DIR>/ingest-log).
  const letters = DeadLetters.at<CallPartEnvelope>(
    join(dataDir, 'ingest-log', 'dead-letter'),
    { segmentBytes: 1 << 20, fsync: false },
    {
      encodeMany: (v) => callPartCodec.encodeMany!(v),
      decodeMany: (b) => callPartCodec.decodeMany!(b),
    },
  );
  letters.open();
  await letters.add(TOPICS.callParts, 'store rejected: Code: 27. Cannot parse input (a test stand-in)', [call(ID)]);
  await letters.add(TOPICS.callParts, 'store rejected: another', [call(OTHER)]);
  letters.close();
  weft = await startWeft({ dataDir });
  api = new Client(weft.url);
  expect((await api.post('/admin/entities/create', { name: 'dl' })).status).toBe(200);
}, 180_000);
afterAll(async () => {
  await weft?.stop();
});

const ids = async () => (await api.jsonl('/calls/stream_query', { project_id: P, columns: ['id'] })).map((c) => c.id as string);

describe('dead letters of the ingest log', () => {
  it('lists and shows them (reason, the call part) to admin keys only', async () => {
    const list = await api.post('/admin/dead_letters/list', {});
    expect(list.status, list.text).toBe(200);
    expect(list.body.dead_letters).toMatchObject([
      { seq: 0, topic: TOPICS.callParts, state: 'pending', values: 1, reason: expect.stringContaining('Cannot parse input') },
      { seq: 1, state: 'pending', reason: 'store rejected: another' },
    ]);
    const one = await api.post('/admin/dead_letters/read', { seq: 0 });
    expect(one.body.payload).toMatchObject([{ project_id: P, id: ID, op_name: 'refused-once' }]);
    const member = clientFor(api, await createKey(api, 'dl-member', ['dl']));
    expect((await member.post('/admin/dead_letters/list', {})).status).toBe(403);
    const none = await api.post('/admin/dead_letters/read', { seq: 99 });
    expect(none.status).toBe(404);
    expect(none.body.field).toBe('seq');
    const bad = await api.post('/admin/dead_letters/replay', { seq: -1 });
    expect(bad.status).toBe(422);
    expect(bad.body.field).toBe('seq');
  });

  it('replays one through the write path into a query result, once; discards another', async () => {
    expect(await ids()).toEqual([]);
    const replayed = await api.post('/admin/dead_letters/replay', { seq: 0 });
    expect(replayed.status, replayed.text).toBe(200);
    expect(replayed.body).toMatchObject({ seq: 0, state: 'replayed' });
    await expect.poll(ids, { timeout: 20_000, interval: 200 }).toEqual([ID]);
    // Again: nothing is published a second time.
    const again = await api.post('/admin/dead_letters/replay', { seq: 0 });
    expect(again.body).toMatchObject({ state: 'replayed', handled_at: replayed.body.handled_at });
    expect((await api.post('/calls/query_stats', { project_id: P })).body.count).toBe(1);

    expect((await api.post('/admin/dead_letters/discard', { seq: 1 })).body).toMatchObject({ seq: 1, state: 'discarded' });
    // A discarded one is not replayed.
    expect((await api.post('/admin/dead_letters/replay', { seq: 1 })).body.state).toBe('discarded');
    expect((await api.post('/admin/dead_letters/list', { state: 'pending' })).body.dead_letters).toEqual([]);
    expect(await ids()).toEqual([ID]);
  });

  it('what became of each is kept across a restart, and the CLI reads it through the server', async () => {
    await weft.stop();
    weft = await startWeft({ dataDir });
    api = new Client(weft.url);
    const states = (await api.post('/admin/dead_letters/list', {})).body.dead_letters.map((d: { state: string }) => d.state);
    expect(states).toEqual(['replayed', 'discarded']);
    const { stdout } = await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'services/cli/bin/weft.mjs'), 'dead-letters', 'list'], {
      env: { ...process.env, WEFT_URL: weft.url, WEFT_API_KEY: 'test-key' },
      timeout: 60_000,
    });
    expect(JSON.parse(stdout).dead_letters.map((d: { seq: number }) => d.seq)).toEqual([0, 1]);
    expect(await ids()).toEqual([ID]);
  });
});
