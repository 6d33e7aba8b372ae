import type { FastifyInstance } from 'fastify';
import { v2ProjectOf, type RouteName, type RouteRequestOf } from '@weft/api';
import { badRequest, notFound } from '@weft/core';
import { parseLosslessJson, toJsonText, type RawJson } from '@weft/digest';
import { addRoute, sendJsonl, sendJsonText, useLosslessJsonBodies, type Authenticator } from '@weft/http';
import {
  createFile,
  createObject,
  createTable,
  deleteObjectVersions,
  isDict,
  objectRef,
  parseRef,
  queryObjects,
  readFiles,
  readObject,
  tableRef,
  type ObjectVersionOut,
} from '@weft/objects';
import type { Store } from '@weft/store';
import {
  datasetVal,
  EVALUATE_SOURCE,
  EVALUATION_SUMMARIZE_SOURCE,
  evaluationVal,
  MODEL_OWN_MEMBERS,
  modelVal,
  objectIdOf,
  opVal,
  PLACEHOLDER_OP_SOURCE,
  PREDICT_AND_SCORE_SOURCE,
  SCORER_SUMMARIZE_SOURCE,
  scorerVal,
  SOURCE_FILE_NAME,
} from './v2-object-vals';

export interface V2ObjectDeps {
  store: Store;
  auth: Authenticator;
}

/** A version just created: its digest, id and version index. */
export interface CreatedVersion {
  digest: string;
  object_id: string;
  version_index: number;
}

/** Publishes an object version and reads back its version index (read-your-writes: objects are stored synchronously). */
export async function createVersion(
  store: Store,
  projectId: string,
  objectId: string,
  val: unknown,
  userId: string,
): Promise<CreatedVersion> {
  const { digest } = await createObject(store, { project_id: projectId, object_id: objectId, val }, userId);
  const read = await readObject(store, { project_id: projectId, object_id: objectId, digest, metadata_only: true });
  return { digest, object_id: objectId, version_index: read.version_index };
}

/** An op whose code is `source`, stored as the SDK stores one (its obj.py file, then the op object). */
export async function createOp(store: Store, projectId: string, name: string, source: string, userId: string): Promise<CreatedVersion> {
  const file = await createFile(store, projectId, SOURCE_FILE_NAME, Buffer.from(source, 'utf8'));
  return createVersion(store, projectId, name, opVal(file.digest), userId);
}

/** The op ref of a created op. */
export const opRefOf = (projectId: string, op: CreatedVersion) => objectRef(projectId, 'op', op.object_id, op.digest);

/**
 * In this plugin scope a request with a JSON Content-Type and no bytes (Content-Length 0, or
 * neither it nor a Transfer-Encoding) has no body, not a 400: 0.54's client sends its DELETEs
 * and its bodiless POSTs (…/finish) so.
 */
export function emptyBodyIsNoBody(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const h = request.headers;
    const noBytes = h['content-length'] === '0' || (h['content-length'] === undefined && h['transfer-encoding'] === undefined);
    if (noBytes) delete h['content-type'];
  });
}

/** A ref in a V2 body must point into the request's project (refs elsewhere are refused, docs/security.md). */
export function checkRefInProject(ref: string, projectId: string, field: string, kinds: readonly string[] = ['object']): void {
  const parsed = parseRef(ref);
  if (!parsed || !kinds.includes(parsed.kind))
    throw badRequest(`${field}: not a weave:/// ${kinds.join(' or ')} ref: ${JSON.stringify(ref)}`, field);
  if (parsed.projectId !== projectId) throw badRequest(`${field}: ref must point into project ${projectId}`, field);
}

/** The object id of a request's name; a name with nothing an id can hold is refused, naming `name`. */
function idFromName(name: string | null | undefined, fallback: string): string {
  const id = objectIdOf(name, fallback);
  if (id === '') throw badRequest(`name: '${name}' has no letter, digit, '_', '.' or '-' to make an object id of`, 'name');
  return id;
}

const valOf = (v: ObjectVersionOut): Record<string, unknown> => {
  const val = 'text' in v.val ? parseLosslessJson((v.val as RawJson).text) : {};
  return isDict(val) ? val : {};
};
const str = (x: unknown): string | null => (typeof x === 'string' ? x : null);
const created = (v: ObjectVersionOut) => ({
  object_id: v.object_id,
  digest: v.digest,
  version_index: v.version_index,
  created_at: v.created_at,
});

/** The digest of a version's source file (its obj.py), if it has one. */
function sourceDigestOf(val: Record<string, unknown>): string | null {
  const files = val.files;
  const digest = isDict(files) ? files[SOURCE_FILE_NAME] : undefined;
  return typeof digest === 'string' ? digest : null;
}

/** The source files of versions, read in one query: file digest → its text. */
async function sourcesOf(store: Store, projectId: string, vals: Record<string, unknown>[]): Promise<Map<string, string>> {
  const digests = vals.map(sourceDigestOf).filter((d): d is string => d !== null);
  const files = await readFiles(store, projectId, digests);
  return new Map([...files].map(([d, b]) => [d, b.toString('utf8')]));
}

/** A version's source code; '' when it has none or the file is gone, as the reference answers. */
const sourceIn = (sources: Map<string, string>, val: Record<string, unknown>) => sources.get(sourceDigestOf(val) ?? '') ?? '';

/** How each V2 object kind is stored and shown. */
interface ObjectKind {
  /** `/v2/{entity}/{project}/<segment>` names. */
  routes: { list: RouteName; read: RouteName; delete: RouteName };
  /** What it is, in messages. */
  noun: string;
  /** The versions it lists: ops, or objects of a base class. */
  filter: { is_op: true } | { is_op: false; base_object_classes: string[] };
  /** Its source code is shown (ops, models): their files are read with the versions. */
  withSource: boolean;
  show(v: ObjectVersionOut, val: Record<string, unknown>, sources: Map<string, string>): unknown;
}

const OPS: ObjectKind = {
  routes: { list: 'v2OpList', read: 'v2OpRead', delete: 'v2OpDelete' },
  noun: 'Op',
  filter: { is_op: true },
  withSource: true,
  show: (v, val, sources) => ({ ...created(v), code: sourceIn(sources, val) }),
};
const DATASETS: ObjectKind = {
  routes: { list: 'v2DatasetList', read: 'v2DatasetRead', delete: 'v2DatasetDelete' },
  noun: 'Dataset',
  filter: { is_op: false, base_object_classes: ['Dataset'] },
  withSource: false,
  show: (v, val) => ({ ...created(v), name: str(val.name) ?? v.object_id, description: str(val.description), rows: str(val.rows) ?? '' }),
};
const SCORERS: ObjectKind = {
  routes: { list: 'v2ScorerList', read: 'v2ScorerRead', delete: 'v2ScorerDelete' },
  noun: 'Scorer',
  filter: { is_op: false, base_object_classes: ['Scorer'] },
  withSource: false,
  show: (v, val) => ({
    ...created(v),
    name: str(val.name) ?? v.object_id,
    description: str(val.description),
    score_op: str(val.score) ?? '',
  }),
};
const EVALUATIONS: ObjectKind = {
  routes: { list: 'v2EvaluationList', read: 'v2EvaluationRead', delete: 'v2EvaluationDelete' },
  noun: 'Evaluation',
  filter: { is_op: false, base_object_classes: ['Evaluation'] },
  withSource: false,
  show: (v, val) => ({
    ...created(v),
    name: str(val.name) ?? v.object_id,
    description: str(val.description),
    dataset: str(val.dataset) ?? '',
    scorers: Array.isArray(val.scorers) ? val.scorers.filter((s): s is string => typeof s === 'string') : [],
    trials: typeof val.trials === 'number' ? val.trials : 1,
    evaluation_name: str(val.evaluation_name),
    evaluate_op: str(val.evaluate),
    predict_and_score_op: str(val.predict_and_score),
    summarize_op: str(val.summarize),
  }),
};
const MODELS: ObjectKind = {
  routes: { list: 'v2ModelList', read: 'v2ModelRead', delete: 'v2ModelDelete' },
  noun: 'Model',
  filter: { is_op: false, base_object_classes: ['Model'] },
  withSource: true,
  show: (v, val, sources) => {
    const attributes = Object.fromEntries(Object.entries(val).filter(([k]) => !MODEL_OWN_MEMBERS.has(k)));
    return {
      ...created(v),
      name: str(val.name) ?? v.object_id,
      description: str(val.description),
      source_code: sourceIn(sources, val),
      attributes: Object.keys(attributes).length > 0 ? attributes : null,
    };
  },
};

/**
 * /v2/{entity}/{project}/ops|datasets|scorers|evaluations|models: create (a new version when
 * the name exists), read a version, list live versions (JSONL, paged), delete versions — thin
 * over libs/objects, with bodies parsed losslessly (digests as the reference's for the same JSON).
 */
export async function v2ObjectRoutes(app: FastifyInstance, deps: V2ObjectDeps): Promise<void> {
  useLosslessJsonBodies(app);
  emptyBodyIsNoBody(app);
  const { store, auth } = deps;

  addRoute(app, auth, 'v2OpCreate', async (body, { caller }) => {
    const projectId = v2ProjectOf(body);
    const op = await createOp(store, projectId, idFromName(body.name, 'Op'), body.source_code ?? PLACEHOLDER_OP_SOURCE, caller.userId);
    return op;
  });

  addRoute(app, auth, 'v2DatasetCreate', async (body, { caller, reply }) => {
    const projectId = v2ProjectOf(body);
    const table = await createTable(store, projectId, body.rows);
    const val = datasetVal(body.name, body.description, tableRef(projectId, table.digest));
    return sendJsonText(reply, await createVersion(store, projectId, idFromName(body.name, 'Dataset'), val, caller.userId));
  });

  addRoute(app, auth, 'v2ScorerCreate', async (body, { caller }) => {
    const projectId = v2ProjectOf(body);
    const objectId = idFromName(body.name, 'Scorer');
    const score = await createOp(store, projectId, `${objectId}_score`, body.op_source_code, caller.userId);
    const summarize = await createOp(store, projectId, `${objectId}_summarize`, SCORER_SUMMARIZE_SOURCE, caller.userId);
    const val = scorerVal(body.name, body.description, opRefOf(projectId, score), opRefOf(projectId, summarize));
    const v = await createVersion(store, projectId, objectId, val, caller.userId);
    return { ...v, scorer: objectRef(projectId, 'object', objectId, v.digest) };
  });

  addRoute(app, auth, 'v2EvaluationCreate', async (body, { caller, reply }) => {
    const projectId = v2ProjectOf(body);
    checkRefInProject(body.dataset, projectId, 'dataset');
    (body.scorers ?? []).forEach((s, i) => checkRefInProject(s, projectId, `scorers[${i}]`, ['object', 'op']));
    const objectId = idFromName(body.name, 'Evaluation');
    const op = async (method: string, source: string) =>
      opRefOf(projectId, await createOp(store, projectId, `${objectId}.${method}`, source, caller.userId));
    const ops = {
      evaluate: await op('evaluate', EVALUATE_SOURCE),
      predictAndScore: await op('predict_and_score', PREDICT_AND_SCORE_SOURCE),
      summarize: await op('summarize', EVALUATION_SUMMARIZE_SOURCE),
    };
    const v = await createVersion(store, projectId, objectId, evaluationVal(body, ops), caller.userId);
    return sendJsonText(reply, { ...v, evaluation_ref: objectRef(projectId, 'object', objectId, v.digest) });
  });

  addRoute(app, auth, 'v2ModelCreate', async (body, { caller, reply }) => {
    const projectId = v2ProjectOf(body);
    const objectId = idFromName(body.name, 'Model');
    const file = await createFile(store, projectId, SOURCE_FILE_NAME, Buffer.from(body.source_code, 'utf8'));
    const v = await createVersion(
      store,
      projectId,
      objectId,
      modelVal(body.name, body.description, file.digest, body.attributes),
      caller.userId,
    );
    return sendJsonText(reply, { ...v, model_ref: objectRef(projectId, 'object', objectId, v.digest) });
  });

  for (const kind of [OPS, DATASETS, SCORERS, EVALUATIONS, MODELS]) await app.register(v2KindRoutes, { ...deps, kind });
}

interface V2KindDeps extends V2ObjectDeps {
  kind: ObjectKind;
}

/** One kind's read, list and delete (its parent's body parsing and hooks apply: a child scope inherits them). */
async function v2KindRoutes(app: FastifyInstance, { store, auth, kind }: V2KindDeps): Promise<void> {
  const isKind = (v: ObjectVersionOut) =>
    kind.filter.is_op ? v.kind === 'op' : v.kind === 'object' && kind.filter.base_object_classes.includes(v.base_object_class ?? '');

  addRoute(app, auth, kind.routes.read, async (raw, { reply }) => {
    const body = raw as RouteRequestOf<'v2OpRead'>;
    const projectId = v2ProjectOf(body);
    // A deleted version answers 404 with its deleted_at (readObject), as the reference's ObjectDeletedError.
    const v = await readObject(store, { project_id: projectId, object_id: body.object_id, digest: body.digest });
    if (!isKind(v)) throw notFound(`${kind.noun} ${body.object_id}:${body.digest} not found`);
    const val = valOf(v);
    const sources = kind.withSource ? await sourcesOf(store, projectId, [val]) : new Map<string, string>();
    return sendJsonText(reply, kind.show(v, val, sources));
  });

  addRoute(app, auth, kind.routes.list, async (raw, { reply }) => {
    const body = raw as RouteRequestOf<'v2OpList'>;
    const projectId = v2ProjectOf(body);
    const versions = await queryObjects(store, {
      project_id: projectId,
      filter: kind.filter,
      // By name, newest version first: a page never splits the order between requests.
      sort_by: [
        { field: 'object_id', direction: 'asc' },
        { field: 'created_at', direction: 'desc' },
      ],
      ...(body.limit !== undefined ? { limit: body.limit } : {}),
      ...(body.offset !== undefined ? { offset: body.offset } : {}),
    });
    // An explicit limit of 0 is no row (queryObjects reads 0 as no limit).
    const shown = body.limit === 0 ? [] : versions;
    await sendJsonl(reply, showAll(store, projectId, kind, shown), undefined, toJsonText);
    return undefined;
  });

  addRoute(app, auth, kind.routes.delete, async (raw) => {
    const body = raw as RouteRequestOf<'v2OpDelete'>;
    const projectId = v2ProjectOf(body);
    // Only versions of this kind: an op's route deletes no Dataset of the same name.
    const live = await queryObjects(store, {
      project_id: projectId,
      filter: { ...kind.filter, object_ids: [body.object_id] },
      metadata_only: true,
    });
    if (live.length === 0) throw notFound(`${kind.noun} ${body.object_id} not found when deleting.`);
    const named = (d: string) => d === 'latest' || /^v\d+$/.test(d) || live.some((v) => v.digest === d);
    if (body.digests && !body.digests.every(named))
      throw notFound(`${kind.noun} ${body.object_id}: a version named in digests does not exist or was deleted`);
    return deleteObjectVersions(store, projectId, body.object_id, body.digests);
  });
}

/** The versions shown, a batch at a time (a batch's source files in one query). */
async function* showAll(store: Store, projectId: string, kind: ObjectKind, versions: ObjectVersionOut[]): AsyncIterable<unknown> {
  const BATCH = 200;
  for (let i = 0; i < versions.length; i += BATCH) {
    const batch = versions.slice(i, i + BATCH).map((v) => ({ v, val: valOf(v) }));
    const sources = kind.withSource
      ? await sourcesOf(
          store,
          projectId,
          batch.map((b) => b.val),
        )
      : new Map<string, string>();
    for (const { v, val } of batch) yield kind.show(v, val, sources);
  }
}
