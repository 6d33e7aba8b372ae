import { createHash } from 'node:crypto';
import { type Logger, mapConcurrently, metrics } from '@weft/core';
import { parseLosslessJson, RawJson } from '@weft/digest';
import {
  callRef,
  createFeedback,
  monitorCallsToScore,
  monitorGroupsToScore,
  objectsOfClass,
  parseRef,
  readObject,
  type MonitorCallsPick,
} from '@weft/objects';
import { callInputsAndOutputs, CallsQueryPlan } from '@weft/query';
import { PeriodicComponent } from '@weft/runtime';
import type { Store } from '@weft/store';
import { readScorers, runScorer, type ScoreResult, type Scorer } from './scorers';
import type { JudgeRecorder } from './judge-model';
import { MonitorLeases } from './monitor-leases';
import type { UpstreamRegistry } from './upstreams';

/** Calls scored at once (each waits on its judges), and written per insert. */
const SCORE_CONCURRENCY = 16;
const FEEDBACK_CHUNK = 100;

/** A scorer's result is `wandb.runnable.<scorer name>` feedback, as Weave's scoring workers write it. */
const RUNNABLE_FEEDBACK_PREFIX = 'wandb.runnable.';

export interface MonitorWorkerOptions {
  /** Time between two looks for new calls (ms). */
  intervalMs: number;
  /** Most calls one monitor scores per look (the rest wait for the next one). */
  batchCalls: number;
  /** Resolves once the writes acknowledged so far are stored. */
  caughtUp?: () => Promise<void>;
  /** Records the judges' requests (in each project's judges project). */
  judges?: JudgeRecorder;
}

/** A Weave `Monitor` object (weave.Monitor(...).activate() publishes it), as stored. */
interface MonitorVal {
  name?: string;
  active?: boolean;
  op_names?: string[];
  query?: { $expr?: Record<string, unknown> } | null;
  sampling_rate?: number;
  scorers?: string[];
  scorer_debounce_config?: DebounceConfig | null;
}

/** Weave's ScorerDebounceConfig: score a trace's or thread's calls once they have gone quiet. */
interface DebounceConfig {
  aggregation_field?: unknown;
  aggregation_method?: unknown;
  timeout_seconds?: unknown;
}

interface ActiveMonitor {
  projectId: string;
  name: string;
  ref: string;
  /** Calls that ended before the version was published are not scored (as Weave: monitors see new calls). */
  sinceUs: number;
  userId: string;
  val: MonitorVal;
}

interface CallToScore {
  id: string;
  inputs: Record<string, unknown>;
  output: unknown;
  endedUs: number;
}

const DEBOUNCE_FIELDS = ['trace_id', 'thread_id'];

/**
 * The server side of Weave Monitors: every `intervalMs`, for each active `Monitor` object of any
 * project, the ended calls that match its op names and query, ended after it was published, fall
 * in its sample (a hash of call and monitor, so the choice is stable) and carry none of its
 * feedback yet are scored by each of its scorers, and the results stored as the feedback Weave
 * writes (`wandb.runnable.<scorer>`, runnable_ref the scorer, trigger_ref the monitor). A call's
 * results are written in one insert with ids derived from (monitor, call, scorer): a restart
 * looks again at what has no feedback, and a result written twice replaces itself. LLM judges
 * (LLMAsAJudgeScorer) ask the model their LLMStructuredCompletionModel names through the
 * upstreams of WEFT_UPSTREAMS_FILE; ValidJSONScorer and ValidXMLScorer run here; any other
 * scorer's result is an error saying weft does not run it.
 */
export class MonitorWorker extends PeriodicComponent {
  private readonly leases: MonitorLeases;

  constructor(
    private readonly store: Store,
    private readonly upstreams: UpstreamRegistry,
    private readonly log: Logger,
    private readonly opts: MonitorWorkerOptions,
  ) {
    super({
      name: 'monitors',
      intervalMs: opts.intervalMs,
      log,
      failure: { level: 'error', message: 'monitors: scoring failed; tried again at the next interval' },
    });
    this.leases = new MonitorLeases(store, opts.intervalMs);
  }

  /** One look: each active monitor's new calls scored. */
  protected async runPass(): Promise<void> {
    await this.opts.caughtUp?.();
    for (const monitor of await this.activeMonitors()) {
      if (this.stopping) return;
      try {
        // Another inference process scores this monitor (its lease is alive): not this one.
        if (!(await this.leases.hold(monitor.projectId, monitor.name))) continue;
        await this.scoreMonitor(monitor);
      } catch (err) {
        this.log.error({ err, monitor: monitor.ref }, 'monitors: a monitor could not score its calls');
      }
    }
  }

  /** The latest live version of every Monitor object whose `active` is true. */
  private async activeMonitors(): Promise<ActiveMonitor[]> {
    const monitors = await objectsOfClass(this.store, 'Monitor', 'monitors.active');
    const out: ActiveMonitor[] = [];
    for (const { project_id, object_id } of monitors) {
      let obj;
      try {
        obj = await readObject(this.store, { project_id, object_id, digest: 'latest' });
      } catch {
        continue; // every version deleted
      }
      const val = toPlain(obj.val) as MonitorVal;
      if (val.active !== true) continue;
      out.push({
        projectId: project_id,
        name: object_id,
        ref: `weave:///${project_id}/object/${object_id}:${obj.digest}`,
        sinceUs: Date.parse(obj.created_at) * 1000,
        userId: obj.svc_user_id ?? 'monitor',
        val,
      });
    }
    return out;
  }

  /**
   * Scores the monitor's backlog: batches of its unscored calls (oldest first), each batch's
   * calls scored SCORE_CONCURRENCY at a time, their results written in one insert per chunk of
   * FEEDBACK_CHUNK calls; the next batch is read once the last one is stored. A crash loses at
   * most the chunks under way: those calls have no feedback, so the next look scores them (the
   * ids are derived, so a result written twice replaces itself).
   */
  private async scoreMonitor(m: ActiveMonitor): Promise<void> {
    const scorers = await this.scorers(m);
    if (scorers.length === 0) return;
    for (;;) {
      const calls = await this.callsToScore(m);
      for (let i = 0; i < calls.length && !this.stopping; i += FEEDBACK_CHUNK) {
        const chunk = calls.slice(i, i + FEEDBACK_CHUNK);
        const results = await mapConcurrently(chunk, SCORE_CONCURRENCY, (call) => Promise.all(scorers.map((s) => this.score(m, s, call))));
        await createFeedback(
          this.store,
          chunk.flatMap((call, c) =>
            scorers.map((s, i) => {
              const r = results[c]![i]!;
              return {
                id: feedbackId(m.name, call.id, s.ref),
                project_id: m.projectId,
                svc_ref: callRef(m.projectId, call.id),
                feedback_type: RUNNABLE_FEEDBACK_PREFIX + runnableName(s),
                runnable_ref: s.ref,
                trigger_ref: m.ref,
                payload: 'error' in r ? { output: null, error: r.error } : { output: r.output },
              };
            }),
          ),
          m.userId,
        );
        const now = Date.now();
        for (const call of chunk) metrics.monitorScoreLag.observe(Math.max(0, now - call.endedUs / 1000) / 1000);
        // A long backlog keeps the lease alive; a lease lost meanwhile leaves the rest to its new holder.
        if (!(await this.leases.hold(m.projectId, m.name))) return;
      }
      // A full batch: more may be waiting; a short one is the end of the backlog.
      if (calls.length < this.opts.batchCalls || this.stopping) return;
    }
  }

  private scorers(m: ActiveMonitor): Promise<Scorer[]> {
    return readScorers(this.store, m.val.scorers ?? []);
  }

  /** What a look asks of the monitor's calls: its ops and query, since it was published, its sample, a batch's size. */
  private sampleOf(m: ActiveMonitor): MonitorCallsPick {
    return {
      plan: monitorCallsPlan(m),
      projectId: m.projectId,
      monitor: m.name,
      sinceUs: m.sinceUs,
      rate: Math.max(0, Math.min(1, m.val.sampling_rate ?? 1)),
      limit: this.opts.batchCalls,
    };
  }

  /** Ended calls of the monitor's ops and query, in its sample, with none of its feedback yet: the oldest first. */
  private async callsToScore(m: ActiveMonitor): Promise<CallToScore[]> {
    const debounce = m.val.scorer_debounce_config;
    if (debounce && DEBOUNCE_FIELDS.includes(String(debounce.aggregation_field))) return this.debouncedCallsToScore(m, debounce);
    const calls = await monitorCallsToScore(this.store, this.sampleOf(m));
    return calls.map((r) => ({
      id: r.id,
      inputs: (r.inputs_dump ? JSON.parse(r.inputs_dump) : {}) as Record<string, unknown>,
      output: r.output_dump ? (JSON.parse(r.output_dump) as unknown) : null,
      endedUs: Number(r.ended_us),
    }));
  }

  /**
   * Debounced (scorer_debounce_config): the monitor's calls grouped by their trace or thread (a
   * call without one is its own group); a group is scored once no call of it has ended for
   * `timeout_seconds`, on its last call, whose feedback the results become. `last_message`
   * (the default) scores that call as it is; `all_messages` scores the group's outputs, oldest
   * first, as `output`, with the calls as `messages` ({inputs, output} each) beside the last
   * call's inputs. A group that gets more calls later is scored again on its new last call.
   * The sample is drawn by group, so a trace or thread is in or out whole.
   */
  private async debouncedCallsToScore(m: ActiveMonitor, d: DebounceConfig): Promise<CallToScore[]> {
    const field = String(d.aggregation_field) as 'trace_id' | 'thread_id';
    const all = d.aggregation_method === 'all_messages';
    const quietMs = Math.max(0, Math.round(Number(d.timeout_seconds ?? 0) * 1000)) || 0;
    const groups = await monitorGroupsToScore(this.store, {
      ...this.sampleOf(m),
      field,
      allMessages: all,
      quietMs,
    });
    const parse = (s: string | null) => (s ? (JSON.parse(s) as unknown) : null);
    const windows = all
      ? await this.callBodies(
          m.projectId,
          groups.flatMap((g) => g.window_ids),
        )
      : new Map();
    return groups.map((g) => {
      const inputs = (parse(g.inputs_dump) ?? {}) as Record<string, unknown>;
      if (!all) return { id: g.id, inputs, output: parse(g.output_dump), endedUs: Number(g.ended_us) };
      const messages = g.window_ids.map((id) => windows.get(id) ?? { inputs: {}, output: null });
      return { id: g.id, inputs: { ...inputs, messages }, output: messages.map((x) => x.output), endedUs: Number(g.ended_us) };
    });
  }

  /** The inputs and output of calls, by id. */
  private async callBodies(projectId: string, ids: string[]): Promise<Map<string, { inputs: unknown; output: unknown }>> {
    if (ids.length === 0) return new Map();
    const rows = await callInputsAndOutputs(this.store, projectId, ids, 'monitors.call_bodies');
    return new Map(
      rows.map((r) => [
        r.id,
        {
          inputs: r.inputs_dump ? (JSON.parse(r.inputs_dump) as unknown) : {},
          output: r.output_dump ? (JSON.parse(r.output_dump) as unknown) : null,
        },
      ]),
    );
  }

  private score(m: ActiveMonitor, s: Scorer, call: CallToScore): Promise<ScoreResult> {
    const trace = this.opts.judges?.for(m.projectId, m.userId, { call_id: call.id, monitor: m.ref, scorer: s.ref });
    return runScorer(this.store, this.upstreams, s, call.output, call.inputs, trace);
  }
}

/**
 * The name a scorer's feedback goes under: its object's name (the SDK publishes a scorer under
 * its `name`, so the two agree), which Weave's feedback rule requires of runnable_ref.
 */
function runnableName(s: Scorer): string {
  const ref = parseRef(s.ref);
  return ref?.kind === 'object' ? ref.name : s.name;
}

/** The calls a monitor watches: its op names and its query. */
function monitorCallsPlan(m: ActiveMonitor): CallsQueryPlan {
  return new CallsQueryPlan({
    project_id: m.projectId,
    filter: m.val.op_names?.length ? { op_names: m.val.op_names } : undefined,
    query: m.val.query?.$expr ? { $expr: m.val.query.$expr } : undefined,
    sort_by: [],
  });
}

/** A stored value (lossless JSON) as plain values. */
function toPlain(v: unknown): unknown {
  return v instanceof RawJson ? JSON.parse(v.text) : typeof v === 'string' ? parseLosslessJson(v) : v;
}

/** The same (monitor, call, scorer) always writes the same feedback id: a result written again replaces itself. */
function feedbackId(monitor: string, callId: string, scorerRef: string): string {
  const h = createHash('sha256').update(`${monitor}\n${callId}\n${scorerRef}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
