import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiError, Caller } from '@weft/core';
import { migrate, openStore, type Store } from '@weft/store';
import { ModelRecords } from '../src/models';
import { TEST_ROOT } from '@weft/harness';

// This file opens exactly one embedded-ClickHouse data dir (chDB allows one per process).
let store: Store;
const caller: Caller = { userId: 'user-1', keyId: 'k', isAdmin: true, entities: [] };

beforeAll(async () => {
  store = openStore({ dataDir: mkdtempSync(join(TEST_ROOT, 'models-')) });
  await migrate(store.client);
});
afterAll(async () => {
  await store?.close();
});

async function rowsNamed(name: string): Promise<number> {
  const rs = await store.client.query({
    query: 'SELECT count() AS n FROM models WHERE name = {name:String}',
    query_params: { name },
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ n: number }>())[0]!.n);
}

describe('model records under racing creators', () => {
  it('stores one row per name when separate service instances race (ClickHouse insert deduplication)', async () => {
    // Two instances, as two inference processes would be: nothing shared but ClickHouse.
    const a = new ModelRecords(store);
    const b = new ModelRecords(store);
    const body = { project: 'p', entity: 'e', name: 'raced', base_model: 'b', return_existing: false };
    const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => (i % 2 ? a : b).create(body, caller)));
    const created = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as ApiError);
    expect(created).toHaveLength(1);
    expect(refused).toHaveLength(15);
    for (const e of refused) expect(e.status).toBe(409);
    expect(await rowsNamed('raced')).toBe(1);

    const again = await Promise.all(
      Array.from({ length: 16 }, (_, i) => (i % 2 ? a : b).create({ ...body, name: 'raced-2', return_existing: true }, caller)),
    );
    expect(new Set(again.map((r) => r.id)).size).toBe(1);
    expect(await rowsNamed('raced-2')).toBe(1);
  });
});
