import { randomUUID } from 'node:crypto';
import { upstreamRequest } from './dialects';
import { normalizeCompletion } from './normalize';
import { postUpstream, UpstreamFailure } from './upstream-client';
import type { UpstreamRegistry } from './upstreams';

/** Tries of a judge's model request when the server fails (5xx, unreachable, timeout): bounded. */
const JUDGE_ATTEMPTS = 2;

/** A judge's answer: the content of its first choice (null when it gave none) and the usage it reported, or why there is none. */
export type JudgeAnswer = { content: string | null; usage?: unknown } | { error: string };

/**
 * One chat completion for a judge (actions' llm_judge, monitors' LLM scorers), sent to the
 * upstream of WEFT_UPSTREAMS_FILE that serves `model` as /v1 would send it. Failures of the
 * server are retried once; a refusal (4xx, a missing key) is not. The judge's own request is not
 * recorded as a call (as the reference's track_llm_call=False): it is never scored in turn.
 */
export async function askJudge(upstreams: UpstreamRegistry, model: string, request: Record<string, unknown>): Promise<JudgeAnswer> {
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
