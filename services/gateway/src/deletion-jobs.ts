import type { z } from 'zod';
import type { deletionStatusRes } from '@weft/api';
import {
  ApiError,
  type Caller,
  generateId,
  inLane,
  type Logger,
  microsToClickHouse,
  microsToIso,
  nowMicros,
  parseTimestampMicros,
} from '@weft/core';
import {
  pendingMutations,
  readDeletionJob,
  recordDeletionJob,
  deleteStepRows,
  stepRowsLeft,
  type DeletionJobRow,
  type DeletionKind,
} from '@weft/query';
import type { Store } from '@weft/store';
import { deletionSteps } from './deletion-plan';

export type DeletionStatus = z.infer<typeof deletionStatusRes>;

/**
 * Deletions that delete: a project's data, or a data subject's calls. A job is recorded
 * (deletion_jobs), then runs its steps one after the other, each a physical delete
 * (physicalDeleteStatement: the engine rewrites the parts holding the rows, so when it ends they
 * are off the disk, not masked), waiting for each mutation to end. Its status reads the rows
 * left in the parts (deleted masks ignored) and the tables' pending mutations, so "done" is the
 * engine's word, not ours. A job cut short (process stopped, an error), or one that ended with
 * rows back in a table, is run again by the next status read: every step deletes by condition,
 * so running one twice is harmless.
 */
export class DeletionJobs {
  /** Jobs running in this process. */
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    /** Resolves once the writes acknowledged so far are stored (Bus.caughtUp): they are deleted too. */
    private readonly caughtUp: () => Promise<void> = async () => undefined,
  ) {}

  async create(kind: DeletionKind, target: string, caller: Caller): Promise<DeletionStatus> {
    const at = nowMicros();
    const job: DeletionJobRow = {
      id: generateId(),
      kind,
      target,
      requested_by: caller.userId,
      requested_at: microsToClickHouse(at),
      state: 'running',
      error: null,
    };
    await this.record(job);
    this.start(job);
    return this.statusOf(job);
  }

  /** A job's status, or 404 when there is none the caller may see (another entity's project, another's user job). */
  async status(jobId: string, caller: Caller): Promise<DeletionStatus> {
    const job = await this.read(jobId);
    if (!job || !mayRead(caller, job)) throw new ApiError(404, `no deletion job ${jobId}`, { field: 'job_id' });
    if (job.state !== 'done' && !this.running.has(job.id)) this.start(job);
    return this.statusOf(job);
  }

  /** Waits for the jobs under way in this process (stop, tests). */
  async idle(): Promise<void> {
    await Promise.all(this.running.values());
  }

  private start(job: DeletionJobRow): void {
    if (this.running.has(job.id)) return;
    // Background lane, whoever asked for it: a request that started the job does not own it.
    const run = inLane('background', () => this.run(job))
      .then(() => this.record({ ...job, state: 'done', error: null }))
      .catch(async (err: unknown) => {
        this.log.error({ err, job: job.id, kind: job.kind }, 'deletion job failed; run again at its next status read');
        await this.record({ ...job, state: 'failed', error: String((err as Error).message ?? err) }).catch(() => undefined);
      })
      .finally(() => this.running.delete(job.id));
    this.running.set(job.id, run);
  }

  private async run(job: DeletionJobRow): Promise<void> {
    await this.caughtUp();
    for (const step of await deletionSteps(this.store, job.kind)) {
      if ((await stepRowsLeft(this.store, step, job.target)) === 0) continue;
      // Each step ends before the next begins (the steps after depend on calls_starts).
      await deleteStepRows(this.store, step, job.target);
    }
    this.log.info({ job: job.id, kind: job.kind }, 'deletion job done: its rows are off the disk');
  }

  private async statusOf(job: DeletionJobRow): Promise<DeletionStatus> {
    const steps = await deletionSteps(this.store, job.kind);
    const tables = [];
    for (const step of steps) tables.push({ table: step.table, rows_left: await stepRowsLeft(this.store, step, job.target) });
    const pending = await pendingMutations(
      this.store,
      steps.map((s) => s.table),
    );
    const current = (await this.read(job.id)) ?? job;
    // Rows back after the job ended (a facts pass that read the calls before they went wrote its
    // rows after the facts' step): not done; the job runs again, as a cut-short one does.
    const left = tables.some((t) => t.rows_left > 0);
    if (current.state === 'done' && left) this.start(job);
    const done = current.state === 'done' && pending === 0 && !left && !this.running.has(job.id);
    return {
      job_id: job.id,
      kind: job.kind,
      target: job.target,
      requested_at: microsToIso(parseTimestampMicros(`${job.requested_at}Z`.replace(' ', 'T'))!),
      state: done ? 'done' : current.state === 'failed' ? 'failed' : 'running',
      tables,
      mutations_pending: pending,
      error: current.error,
    };
  }

  private async record(job: DeletionJobRow): Promise<void> {
    await recordDeletionJob(this.store, job, microsToClickHouse(nowMicros()));
  }

  private read(id: string): Promise<DeletionJobRow | null> {
    return readDeletionJob(this.store, id);
  }
}

/** A project job: admins and members of the project's entity; a user job: admins. */
function mayRead(caller: Caller, job: DeletionJobRow): boolean {
  if (caller.isAdmin) return true;
  return job.kind === 'project' && caller.entities.includes(job.target.split('/')[0]!);
}
