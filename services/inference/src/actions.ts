import { actionSpec, type ActionConfig, type RouteRequestOf } from '@weft/api';
import { badRequest } from '@weft/core';
import { parseLosslessJson, pythonJsonDumps, RawJson } from '@weft/digest';
import { callRef, createFeedback, parseRef, readObject } from '@weft/objects';
import { liveCallBodies } from '@weft/query';
import type { Store } from '@weft/store';
import { askJudge, type JudgeRecorder, type JudgeTrace } from './judge-model';
import type { UpstreamRegistry } from './upstreams';

/** The reference's RUNNABLE_FEEDBACK_TYPE_PREFIX: an action's result is `wandb.runnable.<action name>` feedback. */
export const RUNNABLE_FEEDBACK_PREFIX = 'wandb.runnable.';
/** Calls of one batch run at once (each may wait on a model server). */
const CONCURRENCY = 4;

/** What an action made of one call: its output, or why there is none (stored as `{output: null, error}`). */
export type ActionOutcome = { output: unknown } | { error: string };

interface TargetCall {
  id: string;
  inputs: unknown;
  output: unknown;
}

/**
 * POST /actions/execute_batch (the reference's actions_execute_batch and its dispatcher): read
 * the ActionSpec, run it on each call that exists, store each outcome as the call's
 * `wandb.runnable.<name>` feedback linked to the action's ref. A call the action fails on (the
 * judge's model unknown, failing or answering non-JSON) gets feedback too, with the reason.
 */
export class Actions {
  constructor(
    private readonly store: Store,
    private readonly upstreams: UpstreamRegistry,
    private readonly judges: JudgeRecorder,
    private readonly caughtUp?: () => Promise<void>,
  ) {}

  async executeBatch(req: RouteRequestOf<'actionsExecuteBatch'>, userId: string): Promise<Record<string, never>> {
    const ref = parseRef(req.action_ref);
    if (!ref || ref.kind !== 'object' || ref.extra.length > 0)
      throw badRequest(`action_ref: not an object ref: '${req.action_ref}'`, 'action_ref');
    if (ref.projectId !== req.project_id)
      throw badRequest(`action_ref: ref project '${ref.projectId}' does not match project_id '${req.project_id}'`, 'action_ref');
    const obj = await readObject(this.store, { project_id: req.project_id, object_id: ref.name, digest: ref.version });
    // Plain numbers: the schema is sent on to a model server as JSON.
    const spec = actionSpec.safeParse(obj.val instanceof RawJson ? JSON.parse(obj.val.text) : obj.val);
    if (!spec.success) {
      const issue = spec.error.issues[0]!;
      throw badRequest(`action_ref: not an ActionSpec: ${issue.path.join('.')}: ${issue.message}`, 'action_ref');
    }
    if (req.call_ids.length === 0) return {};
    // The calls may have been acknowledged but not stored yet (the all-in-one's ingest log).
    await this.caughtUp?.();
    const calls = await this.readCalls(req.project_id, [...new Set(req.call_ids)]);
    const config = spec.data.config;
    let next = 0;
    const worker = async () => {
      while (next < calls.length) {
        const call = calls[next++]!;
        const outcome = await this.run(config, call, this.judges.for(req.project_id, userId, { call_id: call.id, action: req.action_ref }));
        await createFeedback(
          this.store,
          [
            {
              project_id: req.project_id,
              svc_ref: callRef(req.project_id, call.id),
              feedback_type: RUNNABLE_FEEDBACK_PREFIX + ref.name,
              runnable_ref: req.action_ref,
              payload: 'error' in outcome ? { output: null, error: outcome.error } : { output: outcome.output },
            },
          ],
          userId,
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, calls.length) }, worker));
    return {};
  }

  private async run(config: ActionConfig, call: TargetCall, trace: JudgeTrace): Promise<ActionOutcome> {
    if (config.action_type === 'contains_words') return { output: containsWords(config.target_words, call.output) };
    return this.judge(config, call, trace);
  }

  /**
   * The reference's llm_judge: the prompt as the system message, `{"inputs", "output"}` of the
   * call (Python's json.dumps) as the user message, the response schema as a json_schema
   * response format (a non-object schema wrapped under `response`); the answer's content
   * parsed as JSON. The model is served by an upstream of WEFT_UPSTREAMS_FILE, as /v1 serves it.
   */
  private async judge(
    config: Extract<ActionConfig, { action_type: 'llm_judge' }>,
    call: TargetCall,
    trace: JudgeTrace,
  ): Promise<ActionOutcome> {
    const wrapped = config.response_schema.type !== 'object';
    const schema = wrapped
      ? { type: 'object', properties: { response: config.response_schema }, additionalProperties: false }
      : config.response_schema;
    const answer = await askJudge(
      this.upstreams,
      config.model,
      {
        messages: [
          { role: 'system', content: config.prompt },
          { role: 'user', content: pythonJsonDumps({ inputs: call.inputs, output: call.output }, { sortKeys: false }) },
        ],
        response_format: { type: 'json_schema', json_schema: { name: 'response_format', schema } },
      },
      trace,
    );
    if ('error' in answer) return answer;
    if (answer.content === null) return { output: null };
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.content);
    } catch {
      return { error: `judge model ${config.model} answered non-JSON: ${JSON.stringify(answer.content.slice(0, 200))}` };
    }
    if (!wrapped) return { output: parsed };
    if (typeof parsed !== 'object' || parsed === null || !('response' in parsed))
      return { error: `judge model ${config.model} answered without the 'response' member its schema asks for` };
    return { output: (parsed as { response: unknown }).response };
  }

  /** The calls that exist and are not deleted, with their inputs and output (null while running). */
  private async readCalls(projectId: string, ids: string[]): Promise<TargetCall[]> {
    const rows = await liveCallBodies(this.store, projectId, ids);
    const parse = (text: string | null) => (text ? parseLosslessJson(text) : null);
    const byId = new Map(rows.map((r) => [r.id, { id: r.id, inputs: parse(r.inputs_dump), output: parse(r.output_dump) }]));
    // In the order asked.
    return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  }
}

/** The reference's contains_words: whether any target word occurs in `json.dumps(output)` (case-sensitive). */
export function containsWords(targetWords: readonly string[], output: unknown): boolean {
  const text = pythonJsonDumps(output ?? null, { sortKeys: false });
  return targetWords.some((w) => text.includes(w));
}
