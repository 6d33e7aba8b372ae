import { post } from './api';
import { parseRef } from './refs';
import type { ObjectVersion } from './types';

/**
 * The project's monitors: Weave `Monitor` objects (`weave.Monitor(...).activate()` publishes
 * one; weft's monitor worker scores the calls they watch), each with its latest results —
 * `wandb.runnable.<scorer>` feedback whose `trigger_ref` names the monitor — and its failures
 * (results holding an `error`). LLM judges' own requests are recorded in `<project>-judges`.
 */
export interface Monitor {
  name: string;
  ref: string;
  active: boolean;
  opNames: string[];
  samplingRate: number | null;
  scorers: string[];
  /** The scorers' refs, as the monitor holds them (an alert on one names it: scorer_ref). */
  scorerRefs: string[];
  createdAt: string;
}

export interface MonitorResult {
  createdAt: string;
  scorer: string;
  callRef: string;
  output: unknown;
  error: string | null;
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

export function monitorOf(projectId: string, o: ObjectVersion): Monitor {
  const val = isObj(o.val) ? o.val : {};
  return {
    name: typeof val.name === 'string' && val.name ? val.name : o.object_id,
    ref: `weave:///${projectId}/object/${o.object_id}:${o.digest}`,
    active: val.active === true,
    opNames: strings(val.op_names).map((op) => parseRef(op)?.name ?? op),
    samplingRate: typeof val.sampling_rate === 'number' ? val.sampling_rate : null,
    scorers: strings(val.scorers).map((s) => parseRef(s)?.name ?? s),
    scorerRefs: strings(val.scorers),
    createdAt: o.created_at,
  };
}

export async function listMonitors(projectId: string, signal?: AbortSignal): Promise<Monitor[]> {
  const r = await post<{ objs: ObjectVersion[] }>(
    '/objs/query',
    {
      project_id: projectId,
      filter: { base_object_classes: ['Monitor'], latest_only: true },
      sort_by: [{ field: 'object_id', direction: 'asc' }],
      limit: 200,
    },
    signal,
  );
  return r.objs.map((o) => monitorOf(projectId, o));
}

/** A monitor's newest results (any of its versions), newest first. */
export async function monitorResults(projectId: string, objectId: string, limit: number, signal?: AbortSignal): Promise<MonitorResult[]> {
  const rows = await post<{ result: Record<string, unknown>[] }>(
    '/feedback/query',
    {
      project_id: projectId,
      query: {
        $expr: {
          $contains: { input: { $getField: 'trigger_ref' }, substr: { $literal: `weave:///${projectId}/object/${objectId}:` } },
        },
      },
      fields: ['created_at', 'feedback_type', 'weave_ref', 'payload'],
      sort_by: [{ field: 'created_at', direction: 'desc' }],
      limit,
    },
    signal,
  );
  return rows.result.map((r) => {
    const payload = isObj(r.payload) ? r.payload : {};
    const error = payload.error;
    return {
      createdAt: String(r.created_at ?? ''),
      scorer: String(r.feedback_type ?? '').replace(/^wandb\.runnable\./, ''),
      callRef: String(r.weave_ref ?? ''),
      output: payload.output,
      error: error === undefined || error === null ? null : typeof error === 'string' ? error : JSON.stringify(error),
    };
  });
}

/** The judges' project of a project: where LLM judges' requests are recorded. */
export const judgesProject = (projectId: string) => `${projectId}-judges`;
