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
 * The entity used when a request names none: the caller's first entity, else its user id.
 * Temporary until keys carry a default entity (security issue).
 */
export function callerDefaultEntity(caller: Caller): string {
  return caller.entities[0] ?? caller.userId;
}
