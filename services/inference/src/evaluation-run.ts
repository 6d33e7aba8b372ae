import type { Caller } from '@weft/core';
import type { RunKey } from './evaluation-registry';
import type { ScoreResult, Scorer, StructuredModel } from './scorers';

/*
 * A server-side evaluation run as its parts share it (evaluations.ts composes them): the run, a
 * row's result, what an interrupted row kept, and the small helpers that name and fail calls as
 * the SDK does.
 */

export const PREDICT_AND_SCORE = 'Evaluation.predict_and_score';

/** The stored Evaluation members weft reads. */
export interface EvaluationVal {
  _class_name?: unknown;
  name?: unknown;
  evaluation_name?: unknown;
  dataset?: unknown;
  scorers?: unknown;
  trials?: unknown;
  evaluate?: unknown;
  predict_and_score?: unknown;
  summarize?: unknown;
}

/** What the root call's attributes say of the run. */
export interface RootAttributes {
  _weave_eval_meta?: { evaluate_model_worker?: unknown };
  weft?: { evaluate_model?: { total_rows?: unknown; max_cost_usd?: unknown } };
}

/** One predict_and_score's output, as the SDK's Evaluation.predict_and_score returns it. */
export interface RowResult {
  output: unknown;
  scores: Record<string, unknown>;
  model_latency: number;
}

export interface Example {
  row: Record<string, unknown>;
  /** `<dataset ref>/attr/rows/id/<row digest>`, as the SDK's inputs name it. */
  ref: string;
}

/** What a row interrupted by a stop or crash had done: its predict_and_score call, the model's answer and the scores stored. */
export interface UnfinishedRow {
  example: Example;
  pasId: string;
  predict: { output: unknown; model?: string; usage?: unknown } | null;
  scores: Map<string, ScoreResult>;
}

/** Where a run stands when it is launched: rows finished, rows interrupted, examples not started. */
export interface RunState {
  results: RowResult[];
  unfinished: UnfinishedRow[];
  remaining: Example[];
}

export interface Run {
  key: RunKey;
  caller: Caller;
  evaluationRef: string;
  modelRef: string;
  evaluation: EvaluationVal;
  model: StructuredModel & { name?: unknown };
  scorers: Scorer[];
  examples: Example[];
  /** Stop starting rows once the run's model and judge requests have cost this much (USD). */
  maxCostUsd: number | null;
  spentUsd: number;
  /** Who cancelled the run, once somebody has. */
  cancelledBy: string | null;
}

export const cancelledMessage = (by: string) => `cancelled by ${by}`;

/** An op member of the object (the op ref the SDK published with it), else the op's plain name. */
export function opName(member: unknown, name: string): string {
  return typeof member === 'string' && member.startsWith('weave:///') ? member : name;
}

/** An exception as the SDK stores one (its UI and ours show `RuntimeError: message`). */
export function exception(message: string): string {
  return JSON.stringify({ type: 'RuntimeError', message, traceback: [] });
}

export function exceptionMessage(stored: string): string {
  try {
    const e = JSON.parse(stored) as { message?: unknown };
    if (typeof e.message === 'string') return e.message;
  } catch {
    // not the SDK's JSON: the text as it is
  }
  return stored;
}

export const isDict = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
