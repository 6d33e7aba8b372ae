import type { Params } from './params';

/**
 * Search over calls, by index. A case-insensitive `$contains` of a literal in one of the
 * searchable fields (the calls view's search box asks exactly that, over several fields at once)
 * keeps its exact condition and gains a second one the engine answers from the text indexes of
 * migration 203: the call's id among those whose searchable text holds the literal. That set
 * holds every call the exact condition matches (each field's text is part of its table's
 * searchable text), so the answer is the same, and only the calls in it are read.
 */

/** Each table's searchable text: the expression its `idx_search` text index is built on. */
export const SEARCH_TEXT = {
  calls_starts:
    "lowerUTF8(concat(ifNull(op_name, ''), '\\n', ifNull(display_name, ''), '\\n', ifNull(inputs_dump, ''), '\\n', ifNull(attributes_dump, '')))",
  calls_ends: "lowerUTF8(concat(ifNull(output_dump, ''), '\\n', ifNull(exception, '')))",
} as const;

/** The fields whose whole value is part of a table's searchable text. */
const SEARCHABLE: Record<string, keyof typeof SEARCH_TEXT> = {
  inputs: 'calls_starts',
  attributes: 'calls_starts',
  op_name: 'calls_starts',
  display_name: 'calls_starts',
  output: 'calls_ends',
  exception: 'calls_ends',
};

/**
 * The literal's text is found as it is in the stored JSON only when nothing in it is escaped
 * there: printable ASCII without `"` or `\`. Other literals keep the exact condition alone.
 */
const PLAIN_TEXT = /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/;

interface SearchTerm {
  table: keyof typeof SEARCH_TEXT;
  field: string;
  text: string;
}

/** A `$contains` whose ids can be narrowed by the index, or null. */
function searchTerm(expr: unknown): SearchTerm | null {
  if (!expr || typeof expr !== 'object' || Array.isArray(expr)) return null;
  const c = (expr as Record<string, unknown>).$contains as Record<string, unknown> | undefined;
  if (!c || typeof c !== 'object' || c.case_insensitive !== true) return null;
  const field = (c.input as Record<string, unknown> | undefined)?.$getField;
  const text = (c.substr as Record<string, unknown> | undefined)?.$literal;
  if (typeof field !== 'string' || typeof text !== 'string' || !PLAIN_TEXT.test(text)) return null;
  // A path under a JSON root (`inputs.question`) is part of that root's dump.
  const table = SEARCHABLE[field] ?? (/^(inputs|output|attributes)\./.test(field) ? SEARCHABLE[field.split('.')[0]!] : undefined);
  return table ? { table, field, text } : null;
}

/** A LIKE pattern matching `text` anywhere, lower-cased as the searchable text is. */
const containsPattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

/** The shortest part of a word the engine looks up in an index's dictionary (SEARCH_SETTINGS; the engine's default is 4). */
const MIN_INDEXED_WORD = 3;

/**
 * The settings of a search's statements: a word of MIN_INDEXED_WORD letters is looked up in the
 * dictionary too (a 3-digit number, `gpt`); where it is part of too many words, the engine reads
 * the text instead (its `text_index_like_max_postings_to_read`).
 */
export const SEARCH_SETTINGS = { text_index_like_min_pattern_length: MIN_INDEXED_WORD } as const;

/**
 * A condition every call whose `table` searchable text holds `text` meets — not exact: the
 * caller keeps the exact condition. A word, or a part of one, the engine answers from the
 * index's dictionary alone (no text read); a text across words (`text-1234`, `a phrase`) is
 * narrowed by each of its words of MIN_INDEXED_WORD letters or more (the whole text implies
 * each), since the whole text would be checked by reading every candidate's text — the exact
 * condition does that, for the rows it is asked about. Without such a word, the whole text.
 */
export function searchTextCondition(table: keyof typeof SEARCH_TEXT, text: string, p: Params): string {
  const words = [...new Set(text.toLowerCase().split(/[^a-z0-9]+/))].filter((w) => w.length >= MIN_INDEXED_WORD);
  const conds = (words.length ? words : [text]).map((t) => `${SEARCH_TEXT[table]} LIKE ${p.str(containsPattern(t))}`);
  return conds.length === 1 ? conds[0]! : `(${conds.join(' AND ')})`;
}

/**
 * For one condition of a calls query (a top-level `$and` term, or the whole `$expr`): a
 * condition on `id` that holds for every call it matches, read from the search indexes — when
 * the condition is such a `$contains`, or an `$or` of them only. Otherwise null. The condition
 * is built for a span of start times (`within`, a condition on calls_starts' `started_at`; a
 * page of a search looks at the newest or oldest calls first, services/query calls.ts).
 */
export function searchNarrowing(expr: unknown, projectSql: string, p: Params): ((within?: string) => string) | null {
  const or = (expr as { $or?: unknown } | null)?.$or;
  const terms = Array.isArray(or) ? or.map(searchTerm) : [searchTerm(expr)];
  if (terms.length === 0 || terms.some((t) => t === null)) return null;
  const byTable = new Map<keyof typeof SEARCH_TEXT, Set<string>>();
  for (const t of terms as SearchTerm[]) byTable.set(t.table, (byTable.get(t.table) ?? new Set()).add(t.text));
  // Bound now (the plan's parameters); the span is added per page.
  const likes = [...byTable].map(([table, texts]) => [table, [...texts].map((t) => searchTextCondition(table, t, p))] as const);
  // A renamed call's name is its rename's (/call/update), which the start's text does not hold: renames are few, read as they are.
  const renamedTexts = [...new Set((terms as SearchTerm[]).filter((t) => t.field === 'display_name').map((t) => t.text))];
  const renamed = renamedTexts.length
    ? `id IN (SELECT id FROM calls_renames WHERE project_id = ${projectSql} AND (${renamedTexts
        .map((t) => `positionCaseInsensitiveUTF8(display_name, ${p.str(t)}) > 0`)
        .join(' OR ')}))`
    : null;
  return (within) => {
    const sets = likes.map(([table, conds]) => {
      const holds = `(${conds.join(' OR ')})`;
      if (!within) return `id IN (SELECT id FROM ${table} WHERE project_id = ${projectSql} AND ${holds})`;
      if (table === 'calls_starts') return `id IN (SELECT id FROM ${table} WHERE project_id = ${projectSql} AND ${within} AND ${holds})`;
      // calls_ends has no start time: the ends of the calls started in the span. The text first
      // (PREWHERE: from the index, where the engine would otherwise read the text of the span's ends).
      return `id IN (SELECT id FROM ${table} PREWHERE ${holds} WHERE project_id = ${projectSql} AND id IN (SELECT id FROM calls_starts WHERE project_id = ${projectSql} AND ${within}))`;
    });
    if (renamed) sets.push(renamed);
    return sets.length === 1 ? sets[0]! : `(${sets.join(' OR ')})`;
  };
}
