import type { StoreStatements } from '@weft/store';

/**
 * Every statement on the models table (model records, `name` unique within entity/project;
 * services/inference models.ts keeps the names unique).
 */

export interface ModelRecord {
  id: string;
  entity: string;
  project: string;
  name: string;
  base_model: string;
  run_id: string | null;
}

/**
 * Inserts a record, deduplicated by its (entity, project, name) key: within the table's
 * deduplication window the engine keeps only the first insert of a token and drops the others.
 */
export async function insertModel(store: StoreStatements, record: ModelRecord, createdBy: string): Promise<void> {
  await store.insertRows('models', [{ ...record, created_by: createdBy }], {
    name: 'models.create',
    settings: {
      insert_deduplicate: 1,
      insert_deduplication_token: JSON.stringify([record.entity, record.project, record.name]),
    },
  });
}

/** The first record of a name in entity/project (the one that won, when several were written). */
export async function findModel(store: StoreStatements, entity: string, project: string, name: string): Promise<ModelRecord | null> {
  const row = await store.row<ModelRecord>(
    `SELECT id, entity, project, name, base_model, run_id FROM models
              WHERE entity = {entity:String} AND project = {project:String} AND name = {name:String}
              ORDER BY created_at, id LIMIT 1`,
    { entity, project, name },
    { name: 'models.find' },
  );
  return row ?? null;
}
