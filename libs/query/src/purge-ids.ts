import { badRequest } from '@weft/core';

/**
 * The ids a purge query names (reference validate_purge_req_*): purges go by id only, as
 * `{$eq: [{$getField: "id"}, {$literal: "<id>"}]}`, `{$in: [{$getField: "id"}, [{$literal}…]]}`
 * or an `$or` of `$eq`s. Anything else is refused with `message`.
 */
export function purgeIds(expr: Record<string, unknown>, message: string): string[] {
  const refuse = () => badRequest(`query: ${message}`, 'query');
  const only = (node: unknown, key: string): unknown => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) throw refuse();
    const keys = Object.keys(node);
    if (keys.length !== 1 || keys[0] !== key) throw refuse();
    return (node as Record<string, unknown>)[key];
  };
  const literal = (node: unknown): string => {
    const v = only(node, '$literal');
    if (typeof v !== 'string') throw refuse();
    return v;
  };
  const idCompare = (node: unknown, op: '$eq' | '$in'): string[] => {
    const pair = only(node, op);
    if (!Array.isArray(pair) || pair.length !== 2 || only(pair[0], '$getField') !== 'id') throw refuse();
    if (op === '$eq') return [literal(pair[1])];
    if (!Array.isArray(pair[1])) throw refuse();
    return pair[1].map(literal);
  };
  const keys = Object.keys(expr);
  if (keys.length !== 1) throw refuse();
  if (keys[0] === '$eq' || keys[0] === '$in') return idCompare(expr, keys[0]);
  if (keys[0] === '$or' && Array.isArray(expr.$or)) return expr.$or.flatMap((e: unknown) => idCompare(e, '$eq'));
  throw refuse();
}
