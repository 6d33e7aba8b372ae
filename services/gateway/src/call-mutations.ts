import { badRequest, nowMicros } from '@weft/core';
import { liveCallsInTracesOf } from '@weft/query';
import type { CallPartRow, Store } from '@weft/store';
import type { CallIngest } from '@weft/ingest';

/**
 * Renames and deletions of calls, as the reference's SDK asks for them (/call/update,
 * /calls/delete). Both are call parts on the bus, like starts and ends: the same durability,
 * folded by calls_renames (the newest name wins) and calls_deleted.
 */
export class CallMutations {
  constructor(
    private readonly ingest: CallIngest,
    private readonly store: Store,
    /** Resolves once the writes acknowledged so far are stored (Bus.caughtUp): the walk must see a call just written. */
    private readonly caughtUp: () => Promise<void> = async () => undefined,
  ) {}

  async rename(projectId: string, callId: string, displayName: string | undefined): Promise<Record<string, never>> {
    if (displayName === undefined) throw badRequest('display_name: One of [display_name] is required for call update', 'display_name');
    const row: CallPartRow = {
      project_id: projectId,
      id: callId,
      display_name: displayName,
      input_refs: [],
      output_refs: [],
      created_at: nowMicros(),
    };
    await this.ingest.publish([row]);
    return {};
  }

  /** Deletes the calls and every descendant (within their traces), one tombstone part each. */
  async delete(projectId: string, callIds: string[]): Promise<{ num_deleted: number }> {
    if (callIds.length === 0) return { num_deleted: 0 };
    await this.caughtUp();
    const doomed = await this.withDescendants(projectId, callIds);
    if (doomed.length === 0) return { num_deleted: 0 };
    const at = nowMicros();
    const deletedAt = Math.floor(nowMicros() / 1000) * 1000;
    await this.ingest.publish(
      doomed.map((id) => ({ project_id: projectId, id, deleted_at: deletedAt, input_refs: [], output_refs: [], created_at: at })),
    );
    return { num_deleted: doomed.length };
  }

  /** The given live calls and, recursively by parent_id, their live descendants. */
  private async withDescendants(projectId: string, callIds: string[]): Promise<string[]> {
    const rows = await liveCallsInTracesOf(this.store, projectId, callIds);
    const children = new Map<string, string[]>();
    const live = new Set<string>();
    for (const r of rows) {
      live.add(r.id);
      if (r.parent_id) children.set(r.parent_id, [...(children.get(r.parent_id) ?? []), r.id]);
    }
    const out = new Set<string>();
    const todo = callIds.filter((id) => live.has(id));
    while (todo.length > 0) {
      const id = todo.pop()!;
      if (out.has(id)) continue;
      out.add(id);
      todo.push(...(children.get(id) ?? []));
    }
    return [...out];
  }
}
