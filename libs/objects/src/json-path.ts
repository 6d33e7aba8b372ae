import { badRequest } from '@weft/core';

/**
 * A dotted field (`a.b.0.c`, `\.` escapes a dot) → a ClickHouse JSON path (`$."a"."b"[0]."c"`),
 * as the reference's quote_json_path builds it. The path is bound as a parameter, never spliced.
 */
export function jsonPathOf(field: string, fieldName: string): string {
  const parts = splitDotted(field);
  if (parts.length === 0 || parts.some((p) => p.trim() === '')) {
    throw badRequest(`${fieldName}: invalid field '${field}': empty path component (leading, trailing or double dot)`, fieldName);
  }
  return '$' + parts.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${JSON.stringify(p)}`)).join('');
}

export function splitDotted(field: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < field.length; i++) {
    const c = field[i]!;
    if (c === '\\' && field[i + 1] === '.') {
      cur += '.';
      i++;
    } else if (c === '.') {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}
