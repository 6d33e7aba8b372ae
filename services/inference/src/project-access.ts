import { forbidden, parseProjectId, type Caller } from '@weft/core';

/**
 * Whether the caller may write to an entity. Callers carry no real entities yet (the
 * security work adds keys and memberships); this is the one place inference asks.
 */
export function assertEntityAccess(caller: Caller, entity: string): void {
  if (!caller.isAdmin && !caller.entities.includes(entity)) {
    throw forbidden(`the caller may not use entity '${entity}'`);
  }
}

export function assertProjectAccess(caller: Caller, projectId: string): void {
  const p = parseProjectId(projectId);
  if (p) assertEntityAccess(caller, p.entity);
}

/**
 * The entity used when a request names none: the key's default entity (its user's entity of the
 * same name, else its first), else the caller's first entity, else its user id.
 */
export function callerDefaultEntity(caller: Caller): string {
  return caller.defaultEntity ?? caller.entities[0] ?? caller.userId;
}
