import { badRequest } from '@weft/core';
import { splitFieldPath } from '@weft/query';

/**
 * A dotted field (`a.b.0.c`, `\.` escapes a dot) → a ClickHouse JSON path (`$."a"."b"[0]."c"`),
 * as the reference's quote_json_path builds it. The path is bound as a parameter, never spliced.
 */
export function jsonPathOf(field: string, fieldName: string): string {
  const parts = splitFieldPath(field);
  if (parts.length === 0 || parts.some((p) => p.trim() === '')) {
    throw badRequest(`${fieldName}: invalid field '${field}': empty path component (leading, trailing or double dot)`, fieldName);
  }
  return '$' + parts.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${JSON.stringify(p)}`)).join('');
}

/** Splitting of dotted fields is the query language's (one rule for calls, tables, feedback). */
export { splitFieldPath as splitDotted };
