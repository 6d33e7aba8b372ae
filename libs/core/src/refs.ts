/** The ref scheme of the reference implementation, so its clients' refs are valid here. */
export const REF_PREFIX = 'weave:///';

/** Every string anywhere inside `value` that is a ref, in document order, without repeats. */
export function extractRefs(value: unknown): string[] {
  const found = new Set<string>();
  const visit = (v: unknown) => {
    if (typeof v === 'string') {
      if (v.startsWith(REF_PREFIX)) found.add(v);
    } else if (Array.isArray(v)) {
      for (const x of v) visit(x);
    } else if (v !== null && typeof v === 'object') {
      for (const x of Object.values(v)) visit(x);
    }
  };
  visit(value);
  return [...found];
}
