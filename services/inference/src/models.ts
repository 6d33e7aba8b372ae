import type { RequestOf } from '@weft/api';
import { generateId, type Caller } from '@weft/core';
import { findModel, insertModel, type ModelRecord } from '@weft/objects';
import type { StoreStatements } from '@weft/store';
import { openAiError } from './openai-errors';
import { assertEntityAccess, callerDefaultEntity } from './project-access';

/**
 * Model records, `name` unique within entity/project.
 *
 * ClickHouse has no unique constraint. A create first looks the name up (an existing record is
 * returned or is a 409); otherwise it inserts with `insert_deduplication_token` set to the
 * (entity, project, name) key. Within the table's deduplication window ClickHouse keeps only
 * the first insert of a token and silently drops the others, atomically, whichever process
 * sends them; so after inserting, a creator reads the name back: its own row means it created
 * the record, another row means it lost a race and answers as for an existing name. The window
 * (100,000 inserts) only has to cover creates that race each other; older names are found by
 * the first lookup.
 */
export class ModelRecords {
  constructor(private readonly store: StoreStatements) {}

  async create(body: RequestOf<'modelCreate'>, caller: Caller): Promise<ModelRecord> {
    const entity = body.entity ?? callerDefaultEntity(caller);
    assertEntityAccess(caller, entity);
    const existing = await this.find(entity, body.project, body.name);
    if (existing) return this.whenExists(existing, body.return_existing);
    const id = generateId();
    await insertModel(
      this.store,
      { entity, project: body.project, name: body.name, id, base_model: body.base_model, run_id: null },
      caller.userId,
    );
    const winner = (await this.find(entity, body.project, body.name))!;
    return winner.id === id ? winner : this.whenExists(winner, body.return_existing);
  }

  private whenExists(existing: ModelRecord, returnExisting: boolean): ModelRecord {
    if (returnExisting) return existing;
    throw openAiError(
      409,
      `A model named '${existing.name}' already exists in ${existing.entity}/${existing.project}; send return_existing=true to get it.`,
      { type: 'ConflictError', param: 'name' },
    );
  }

  private find(entity: string, project: string, name: string): Promise<ModelRecord | null> {
    return findModel(this.store, entity, project, name);
  }
}
