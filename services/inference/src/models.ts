import type { ClickHouseClient } from '@clickhouse/client';
import type { RequestOf } from '@weft/api';
import { generateId, type Caller } from '@weft/core';
import { openAiError } from './openai-errors';
import { assertEntityAccess, callerDefaultEntity } from './project-access';

export interface ModelRecord {
  id: string;
  entity: string;
  project: string;
  name: string;
  base_model: string;
  run_id: string | null;
}

/**
 * Model records, `name` unique within entity/project.
 *
 * ClickHouse cannot enforce uniqueness, so two layers do:
 *  1. within one process, creates of the same name are serialised (a per-name queue), so
 *     check-then-insert cannot interleave: exact for the all-in-one service;
 *  2. across processes, the record of a name is by definition its earliest stored row
 *     (server-assigned created_at, then id). After inserting, a creator reads the winner back;
 *     if another instance's row won, it answers as for an existing name (409, or the winner
 *     with return_existing) and its own row is never returned by anyone. The only window left
 *     is two inserts landing within one insert's duration in different processes, where both
 *     may see their own row first; it closes on the next read.
 */
export class ModelRecords {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly client: ClickHouseClient) {}

  async create(body: RequestOf<'modelCreate'>, caller: Caller): Promise<ModelRecord> {
    const entity = body.entity ?? callerDefaultEntity(caller);
    assertEntityAccess(caller, entity);
    const key = JSON.stringify([entity, body.project, body.name]);
    return this.serialised(key, async () => {
      const existing = await this.find(entity, body.project, body.name);
      if (existing) return this.whenExists(existing, body.return_existing);
      const id = generateId();
      await this.client.insert({
        table: 'models',
        values: [{ entity, project: body.project, name: body.name, id, base_model: body.base_model, run_id: null, created_by: caller.userId }],
        format: 'JSONEachRow',
      });
      const winner = (await this.find(entity, body.project, body.name))!;
      return winner.id === id ? winner : this.whenExists(winner, body.return_existing);
    });
  }

  private whenExists(existing: ModelRecord, returnExisting: boolean): ModelRecord {
    if (returnExisting) return existing;
    throw openAiError(
      409,
      `A model named '${existing.name}' already exists in ${existing.entity}/${existing.project}; send return_existing=true to get it.`,
      { type: 'ConflictError', param: 'name' },
    );
  }

  private async find(entity: string, project: string, name: string): Promise<ModelRecord | null> {
    const rs = await this.client.query({
      query: `SELECT id, entity, project, name, base_model, run_id FROM models
              WHERE entity = {entity:String} AND project = {project:String} AND name = {name:String}
              ORDER BY created_at, id LIMIT 1`,
      query_params: { entity, project, name },
      format: 'JSONEachRow',
    });
    const rows = await rs.json<ModelRecord>();
    return rows[0] ?? null;
  }

  private serialised<T>(key: string, work: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(key) ?? Promise.resolve();
    const next = prev.then(work, work);
    const tail = next.catch(() => undefined);
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    return next;
  }
}
