/**
 * A call's own usage: what its own LLM requests used, so that totals over calls count each
 * request once.
 *
 * The Weave SDK rolls its children's `summary.usage` up into a parent's when the parent ends, and
 * a call with children then carries exactly their sum (the SDK's rule: a call with children has no
 * request of its own). OTLP spans and writers that send each call's own figures carry their own
 * usage. The reference (usage_utils) reads every `summary.usage` as the call's own; so does weft,
 * per model, except where it is exactly the sum of the call's children's for that model (every
 * token count equal: prompt, completion, total, cache read, cache creation) — the SDK's
 * roll-up, which is its children's usage, not the call's. A parent that used a model beside its
 * children keeps it whole (the reference's figure). Deleted children count in the sum: the
 * parent's summary still holds them.
 */

/** calls_ends.usage's type: own usage keeps its element names. */
export const USAGE_TYPE =
  'Array(Tuple(model String, requests Int64, prompt_tokens Int64, completion_tokens Int64, total_tokens Int64, cache_read_input_tokens Int64, cache_creation_input_tokens Int64))';

/** Which calls' children a query reads (the right sides of INs: a subquery in parentheses, or a list of ids). */
export interface ChildrenOf {
  parents: string;
  /**
   * The parents' children's ids, when known as a list: both sides are then read by their ids (an
   * IN over a subquery of a subquery reads every granule; a FINAL read by parent_id alone, many).
   */
  children?: string;
}

/**
 * Per parent id, the sum of its children's usage as `sumMap`'s tuple (models, then the six
 * counts in `usage`'s order: requests, prompt, completion, total, cache read, cache creation).
 * `of` limits it to some parents' children, when they are few.
 */
export function childUsageSql(projectSql: string, of?: ChildrenOf): string {
  const parents = of?.parents;
  const counts = [2, 3, 4, 5, 6, 7].map((i) => `arrayMap(u -> u.${i}, e.usage)`).join(', ');
  const children = `SELECT id, assumeNotNull(parent_id) AS parent_id FROM calls_starts FINAL
      WHERE project_id = ${projectSql}${of?.children ? ` AND id IN ${of.children}` : ''} AND parent_id IS NOT NULL${parents ? ` AND parent_id IN ${parents}` : ''}`;
  // Both sides by id, sorted and merged: calls_ends is stored in id order, cheaper than hashing
  // the ends with an IN-set of them on the starts (docs/performance.md, "Reads").
  return `SELECT s.parent_id AS parent_id, sumMap(arrayMap(u -> u.1, e.usage), ${counts}) AS child_usage
    FROM (SELECT id, usage FROM calls_ends FINAL WHERE project_id = ${projectSql} AND notEmpty(usage)${of?.children ? ` AND id IN ${of.children}` : parents ? ` AND id IN (SELECT id FROM (${children}))` : ''}) AS e
    INNER JOIN (${children}) AS s ON e.id = s.id
    GROUP BY parent_id
    SETTINGS join_algorithm = 'full_sorting_merge'`;
}

/**
 * `usage` (a call's) less the models where its tokens are exactly `child`'s (childUsageSql's
 * tuple): the SDK's roll-up; empty entries dropped. The request count is not compared: a wrapper
 * that rolls up its steps' tokens may say one request for several (the Vercel AI SDK's
 * `ai.generateText` over its `doGenerate` steps), and is a roll-up all the same.
 */
export function ownUsageExpr(usage: string, child: string): string {
  const same = [3, 4, 5, 6, 7].map((i) => `x.1.${i} = ${child}.${i}[x.2]`).join(' AND ');
  const kept = `arrayFilter(x -> NOT (x.2 != 0 AND ${same}), arrayMap(u -> (u, indexOf(${child}.1, u.1)), ${usage}))`;
  return `CAST(arrayFilter(t -> t.2 + t.3 + t.4 + t.5 + t.6 + t.7 > 0, arrayMap(x -> x.1, ${kept})), '${USAGE_TYPE}')`;
}

/**
 * The op names of the calls weft's `/v1` front records (services/inference): the one LLM
 * request each made, which the caller may have recorded too.
 */
export const FRONT_OP_NAMES = {
  chat: 'weave.chat_completions_create',
  responses: 'weave.responses_create',
  completions: 'weave.completions_create',
} as const;

/** How far from a front call's start the caller's record of the same request is looked for. */
const LINK_WINDOW_SECONDS = 600;

/**
 * One request recorded twice, counted once. A client traced by the Weave SDK (its OpenAI
 * integration) or by an instrumentation that sends no `traceparent` (the Agents SDK's) records
 * the request it sends through weft's `/v1` front, and the front records it too, in the same
 * project. Both records hold the upstream response's id: the front's call's output `id`; the
 * caller's, its output `id` (the Weave SDK's integrations) or `output.value.id` (OpenInference's
 * spans). A front call whose response id another call of the project holds is linked to that
 * call and counts no usage of its own; the caller's record counts it (it is the one in the
 * caller's tree, which the SDK's roll-ups already hold). A front call with a `traceparent` is the
 * caller's span's child and needs no link: own usage already counts it once.
 *
 * The ids of the linked front calls. Cheap when a project has no front calls (the bloom filter
 * on op skips the starts; the window is empty); otherwise the caller's records are read only
 * within LINK_WINDOW_SECONDS of the front calls' starts.
 */
export function linkedFrontCallsSql(projectSql: string): string {
  const ops = Object.values(FRONT_OP_NAMES)
    .map((o) => `'${o}'`)
    .join(', ');
  const front = `SELECT id, started_at FROM calls_starts WHERE project_id = ${projectSql} AND op_name IN (${ops})`;
  const responseId = `if(JSONHas(output_dump, 'id'), JSONExtractString(output_dump, 'id'), JSONExtractString(output_dump, 'output.value', 'id'))`;
  const near = `SELECT id FROM calls_starts WHERE project_id = ${projectSql}
      AND started_at >= (SELECT min(started_at) - INTERVAL ${LINK_WINDOW_SECONDS} SECOND FROM (${front}))
      AND started_at <= (SELECT max(started_at) + INTERVAL ${LINK_WINDOW_SECONDS} SECOND FROM (${front}))
      AND id NOT IN (SELECT id FROM (${front}))`;
  return `SELECT id FROM calls_ends FINAL
    WHERE project_id = ${projectSql} AND id IN (SELECT id FROM (${front})) AND notEmpty(usage)
      AND JSONExtractString(output_dump, 'id') != ''
      AND JSONExtractString(output_dump, 'id') IN (
        SELECT ${responseId} FROM calls_ends FINAL WHERE project_id = ${projectSql} AND notEmpty(usage) AND id IN (${near}))`;
}

/**
 * `callsSql`'s rows (with `id` and `usage` among `columns`) with `usage` replaced by the call's
 * own usage; a linked front call's is empty (linkedFrontCallsSql). Calls whose children used
 * nothing are unchanged. `of.parents`: ids among which the
 * calls are (a few days' starts, a list of touched calls), when they are a small part of the
 * project: only their children are read.
 */
export function withOwnUsageSql(callsSql: string, columns: string[], projectSql: string, of?: ChildrenOf): string {
  const others = columns.filter((c) => c !== 'usage' && c !== 'id');
  const children = childUsageSql(projectSql, of);
  return `SELECT c.id AS id, ${others.map((col) => `c.${col} AS ${col}, `).join('')}if(c.id IN (${linkedFrontCallsSql(projectSql)}), CAST([], '${USAGE_TYPE}'), ${ownUsageExpr('c.usage', 'k.child_usage')}) AS usage
    FROM (${callsSql}) AS c
    LEFT JOIN (${children}) AS k ON k.parent_id = c.id`;
}
