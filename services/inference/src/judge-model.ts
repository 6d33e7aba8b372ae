import { randomUUID } from 'node:crypto';
import type { CallIngest } from '@weft/ingest';
import { upstreamRequest } from './dialects';
import { LlmCall } from './llm-call';
import { normalizeCompletion } from './normalize';
import { postUpstream, UpstreamFailure } from './upstream-client';
import type { UpstreamRegistry } from './upstreams';

/** Tries of a judge's model request when the server fails (5xx, unreachable, timeout): bounded. */
const JUDGE_ATTEMPTS = 2;

/** A judge's answer: the content of its first choice (null when it gave none) and the usage it reported, or why there is none. */
export type JudgeAnswer = { content: string | null; usage?: unknown } | { error: string };

/** The project a project's judge requests are recorded in: beside it, never the judged project itself. */
export const judgesProject = (projectId: string) => `${projectId}-judges`;

/**
 * Records judge requests as calls (op `weft.judge`: the request, the answer or the error, its
 * usage) in the judged project's judges project, each naming what it judged in
 * `attributes.weft.judged`. They are never scored in turn: no monitor of the judged project sees
 * them, and the judges project's own monitors are the user's choice.
 */
export class JudgeRecorder {
  constructor(private readonly ingest: CallIngest) {}

  /** A trace of one judge request: the judged project, who asked (feedback's author) and what was judged. */
  for(projectId: string, userId: string, judged: Record<string, unknown>): JudgeTrace {
    return async (model, request, answer) => {
      const call = LlmCall.begin(this.ingest, {
        projectId: judgesProject(projectId),
        caller: { userId, keyId: 'judge', isAdmin: false, entities: [] },
        opName: 'weft.judge',
        inputs: { model, ...request },
        attributes: { weft: { judged: { project_id: projectId, ...judged } } },
      });
      await call.end(
        'error' in answer
          ? { output: null, exception: JSON.stringify({ type: 'JudgeError', message: answer.error, traceback: [] }) }
          : { output: answer.content, model, usage: answer.usage },
      );
    };
  }
}

/** Records one judge request and its answer. */
export type JudgeTrace = (model: string, request: Record<string, unknown>, answer: JudgeAnswer) => Promise<void>;

/**
 * One chat completion for a judge (actions' llm_judge, monitors' LLM scorers), sent to the
 * upstream of WEFT_UPSTREAMS_FILE that serves `model` as /v1 would send it. Failures of the
 * server are retried once; a refusal (4xx, a missing key) is not. With a `trace`, the request is
 * recorded (JudgeRecorder) in a project of its own, so it is never scored in turn.
 */
export async function askJudge(
  upstreams: UpstreamRegistry,
  model: string,
  request: Record<string, unknown>,
  trace?: JudgeTrace,
): Promise<JudgeAnswer> {
  const answer = await askUpstream(upstreams, model, request);
  await trace?.(model, request, answer);
  return answer;
}

async function askUpstream(upstreams: UpstreamRegistry, model: string, request: Record<string, unknown>): Promise<JudgeAnswer> {
  const upstream = upstreams.find(model);
  if (!upstream) return { error: `Model ${model} is not served here: no configured upstream lists it` };
  let failure = '';
  for (let attempt = 1; attempt <= JUDGE_ATTEMPTS; attempt++) {
    const requestId = randomUUID();
    try {
      const raw = await postUpstream(
        upstream,
        upstreamRequest(upstream.dialect, { ...request, model }, { stream: false, requestId, kind: 'chat' }),
      );
      const answer = normalizeCompletion(raw, { id: `chatcmpl-${requestId}`, model, created: Math.floor(Date.now() / 1000) });
      const content = (answer.choices as { message?: { content?: unknown } }[] | undefined)?.[0]?.message?.content;
      return { content: content === null || content === undefined ? null : String(content), usage: answer.usage };
    } catch (e) {
      if (!(e instanceof UpstreamFailure)) throw e;
      failure = e.message;
      const retryable = e.kind === 'unreachable' || e.kind === 'timeout' || (e.kind === 'status' && (e.status ?? 0) >= 500);
      if (!retryable) break;
    }
  }
  return { error: `judge model ${model} failed: ${failure}` };
}
