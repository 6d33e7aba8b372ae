/**
 * The Op filter as the table shows ops: by their short names. A term (comma-separated) is
 *   - `name`: op_name `name`, or any version of the project's op ref `weave:///<project>/op/name:…`;
 *   - `name*`: op names, and names of the project's op refs, starting with `name`;
 *   - a full `weave:///…` ref (with the interface's `:*` for any version): as it is.
 * Without a `*` term it is the interface's `filter.op_names` (exact and `:*`); prefixes need a
 * `$expr`: a range `prefix <= op_name < next(prefix)`, which the server compares as strings.
 */
export interface OpCondition {
  op_names?: string[];
  expr?: Record<string, unknown>;
}

const OP_NAME = { $getField: 'op_name' };

/** The smallest string above every string starting with `prefix` (its last code point + 1). */
function nextPrefix(prefix: string): string {
  const chars = [...prefix];
  const last = chars.pop()!.codePointAt(0)!;
  return chars.join('') + String.fromCodePoint(last + 1);
}

const startsWith = (prefix: string) => ({
  $and: [{ $gte: [OP_NAME, { $literal: prefix }] }, { $lt: [OP_NAME, { $literal: nextPrefix(prefix) }] }],
});

export function opCondition(text: string, projectId: string): OpCondition {
  const terms = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const opRef = (name: string) => `weave:///${projectId}/op/${name}`;
  const names: string[] = [];
  const prefixes: string[] = [];
  for (const t of terms) {
    if (t.startsWith('weave:///')) names.push(t);
    else if (t.endsWith(':*')) {
      // `name:*` (any version) is what `name` means already.
      names.push(t.slice(0, -2), opRef(`${t.slice(0, -2)}:*`));
    } else if (t.endsWith('*')) {
      const p = t.replace(/\*+$/, '');
      if (p === '') return {}; // `*`: any op
      prefixes.push(p, opRef(p));
    } else names.push(t, opRef(`${t}:*`));
  }
  if (names.length + prefixes.length === 0) return {};
  if (prefixes.length === 0) return { op_names: names };
  const exact = names.filter((n) => !n.endsWith(':*'));
  const any = [
    ...prefixes.map(startsWith),
    ...names.filter((n) => n.endsWith(':*')).map((n) => startsWith(n.slice(0, -1))),
    ...(exact.length ? [{ $in: [OP_NAME, exact.map((n) => ({ $literal: n }))] }] : []),
  ];
  return { expr: any.length === 1 ? any[0]! : { $or: any } };
}
