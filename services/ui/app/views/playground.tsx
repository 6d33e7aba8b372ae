import { useEffect, useState } from 'preact/hooks';
import { postJsonl } from '../api';
import { Layout } from '../components/layout';
import { Conversation, findConversation } from '../components/messages';
import { Empty, ErrorBox, Loading, NoSuchCall } from '../components/states';
import { callTokens, fmtAgo, fmtInt, fmtMs, fmtTime, latencyMs, opLabel } from '../format';
import {
  PARAM_NAMES,
  replaysOf,
  requestFromCall,
  runReplay,
  servedModels,
  type OpenAiMessage,
  type Params,
  type PlaygroundRequest,
  type Replay,
} from '../playground';
import { projectHref } from '../route';
import type { Call } from '../types';
import { useAsync } from '../use-async';
import { useBodyKeys } from '../use-body-keys';

const ROLES = ['system', 'user', 'assistant', 'tool'];
const PARAM_LABELS: Record<(typeof PARAM_NAMES)[number], [string, string]> = {
  temperature: ['Temperature', '0.1'],
  max_tokens: ['Max tokens', '1'],
  top_p: ['Top p', '0.05'],
};

/** A message being edited: text content as it is, any other content (parts) as JSON text. */
interface Draft {
  message: OpenAiMessage;
  text: string;
  json: boolean;
}
const toDraft = (m: OpenAiMessage): Draft =>
  Array.isArray(m.content)
    ? { message: m, text: JSON.stringify(m.content, null, 2), json: true }
    : { message: m, text: m.content ?? '', json: false };

function fromDraft(d: Draft, i: number): OpenAiMessage {
  if (!d.json) return { ...d.message, content: d.text === '' && d.message.tool_calls ? null : d.text };
  try {
    return { ...d.message, content: JSON.parse(d.text) as unknown[] };
  } catch (e) {
    throw new Error(`message ${i + 1}: its content is not JSON (${(e as Error).message})`);
  }
}

/**
 * The playground (`#/p/<e>/<p>/playground/<call id>`): an LLM call's request, editable (model,
 * messages, parameters), run again through weft's `/v1/chat/completions` — recorded as a call in
 * the project that names the original — with the original output and the new one side by side.
 * Without a call id it starts from an empty conversation.
 */
export function PlaygroundView({ projectId, callId }: { projectId: string; callId?: string }) {
  const source = useAsync(
    async (signal) => {
      if (!callId) return null;
      const [call] = await postJsonl<Call>(
        '/calls/stream_query',
        { project_id: projectId, filter: { call_ids: [callId] }, include_costs: true },
        signal,
      );
      return call ?? undefined;
    },
    [projectId, callId],
  );
  const models = useAsync((signal) => servedModels(signal), []);
  return (
    <Layout projectId={projectId} tab="playground">
      <div class="crumbs">
        <a href={projectHref(projectId, ['calls'])}>Calls</a> / playground
        {callId ? (
          <>
            {' '}
            · replaying <a href={projectHref(projectId, ['call', callId])}>{source.data ? opLabel(source.data.op_name) : 'call'}</a>{' '}
            <code>{callId}</code>
          </>
        ) : null}
      </div>
      {source.loading ? <Loading what="call" /> : null}
      {source.error ? <ErrorBox error={source.error} /> : null}
      {source.data === undefined && !source.loading && !source.error ? <NoSuchCall projectId={projectId} callId={callId} /> : null}
      {!source.loading && source.data !== undefined ? (
        <Playground key={callId ?? ''} projectId={projectId} source={source.data} models={models.data ?? null} modelsError={models.error} />
      ) : null}
    </Layout>
  );
}

function Playground({
  projectId,
  source,
  models,
  modelsError,
}: {
  projectId: string;
  source: Call | null;
  models: string[] | null;
  modelsError: unknown;
}) {
  const original = source ? requestFromCall(source) : { model: null, messages: [{ role: 'user', content: '' }], params: {}, tools: null };
  const [drafts, setDrafts] = useState<Draft[]>(() => (original?.messages ?? []).map(toDraft));
  const [model, setModel] = useState<string>(original?.model ?? '');
  const [params, setParams] = useState<Record<string, string>>(() =>
    Object.fromEntries(PARAM_NAMES.map((n) => [n, original?.params[n] === undefined ? '' : String(original.params[n])])),
  );
  const [sendTools, setSendTools] = useState(true);
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<Replay | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [runs, setRuns] = useState(0);
  useBodyKeys((e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !running) {
      e.preventDefault();
      void run();
    }
  });
  // The original model when weft serves it, else the first served one.
  useEffect(() => {
    if (models && models.length && !models.includes(model)) setModel(models[0]!);
  }, [models]);

  if (source && !original) {
    return (
      <Empty title="Not an LLM call">
        <p>This call's inputs hold no chat messages to replay.</p>
      </Empty>
    );
  }
  const run = async () => {
    setError(null);
    let req: PlaygroundRequest;
    try {
      const p: Params = {};
      for (const n of PARAM_NAMES) {
        const raw = params[n]!.trim();
        if (raw === '') continue;
        const v = Number(raw);
        if (!Number.isFinite(v)) throw new Error(`${PARAM_LABELS[n][0]}: not a number`);
        p[n] = v;
      }
      req = { model: model || null, messages: drafts.map(fromDraft), params: p, tools: sendTools ? (original?.tools ?? null) : null };
    } catch (e) {
      return setError(e);
    }
    setRunning(true);
    try {
      setResult(await runReplay(projectId, source?.id ?? null, req));
      setRuns((n) => n + 1);
    } catch (e) {
      setError(e);
    } finally {
      setRunning(false);
    }
  };
  const update = (i: number, d: Partial<Draft>) => setDrafts((ds) => ds.map((x, j) => (j === i ? { ...x, ...d } : x)));
  const setRole = (i: number, role: string) =>
    setDrafts((ds) => ds.map((x, j) => (j === i ? { ...x, message: { ...x.message, role } } : x)));
  const originalModel = original?.model;
  const originalOutput = source ? findConversation(source.output) : null;
  const newOutput = result ? findConversation(result.response) : null;
  const usage = result?.response.usage as { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | undefined;

  return (
    <div
      class="playground"
      onKeyDown={(e) => {
        if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !running) {
          e.preventDefault();
          void run();
        }
      }}
    >
      <section class="pg-request" aria-label="Request">
        <div class="pg-params">
          <label>
            Model
            {models ? (
              <select name="model" value={model} onChange={(e) => setModel((e.target as HTMLSelectElement).value)}>
                {models.map((m) => (
                  <option key={m} value={m}>
                    {m}
                  </option>
                ))}
              </select>
            ) : (
              <input name="model" value={model} onInput={(e) => setModel((e.target as HTMLInputElement).value)} />
            )}
          </label>
          {PARAM_NAMES.map((n) => (
            <label key={n}>
              {PARAM_LABELS[n][0]}
              <input
                name={n}
                type="number"
                step={PARAM_LABELS[n][1]}
                size={6}
                placeholder="default"
                value={params[n]}
                onInput={(e) => setParams({ ...params, [n]: (e.target as HTMLInputElement).value })}
              />
            </label>
          ))}
        </div>
        {originalModel && models && !models.includes(originalModel) ? (
          <p class="muted">
            The original model <code>{originalModel}</code> is not one weft serves (<code>GET /v1/models</code>); pick one of those.
          </p>
        ) : null}
        {modelsError ? <ErrorBox error={modelsError} /> : null}
        {models && models.length === 0 ? (
          <p class="muted">
            weft serves no models: list model servers in <code>WEFT_UPSTREAMS_FILE</code>.
          </p>
        ) : null}
        {original?.tools ? (
          <label class="check">
            <input type="checkbox" checked={sendTools} onChange={(e) => setSendTools((e.target as HTMLInputElement).checked)} /> send its{' '}
            {original.tools.length} tool definition{original.tools.length === 1 ? '' : 's'}
          </label>
        ) : null}
        <ol class="pg-messages" aria-label="Messages">
          {drafts.map((d, i) => (
            <li key={i} class={`pg-message role-${d.message.role}`}>
              <div class="pg-message-head">
                <select
                  aria-label={`Role of message ${i + 1}`}
                  value={d.message.role}
                  onChange={(e) => setRole(i, (e.target as HTMLSelectElement).value)}
                >
                  {[...new Set([...ROLES, d.message.role])].map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
                {d.json ? <span class="muted">content parts (JSON)</span> : null}
                {d.message.tool_call_id ? <span class="muted">result of {d.message.tool_call_id}</span> : null}
                <span class="spacer" />
                <button
                  type="button"
                  class="link"
                  aria-label={`Remove message ${i + 1}`}
                  onClick={() => setDrafts((ds) => ds.filter((_, j) => j !== i))}
                >
                  ✕
                </button>
              </div>
              <textarea
                aria-label={`Message ${i + 1}`}
                rows={Math.min(12, Math.max(2, d.text.split('\n').length))}
                value={d.text}
                onInput={(e) => update(i, { text: (e.target as HTMLTextAreaElement).value })}
              />
              {d.message.tool_calls ? (
                <div class="muted pg-tool-calls">
                  tool calls: {d.message.tool_calls.map((t) => (t as { function?: { name?: string } }).function?.name ?? '?').join(', ')}
                </div>
              ) : null}
            </li>
          ))}
        </ol>
        <div class="pg-actions">
          <button type="button" onClick={() => setDrafts((ds) => [...ds, toDraft({ role: 'user', content: '' })])}>
            + Message
          </button>
          <span class="spacer" />
          <button type="button" class="primary" disabled={running || drafts.length === 0} onClick={() => void run()}>
            {running ? 'Running…' : 'Run'} <kbd>Ctrl+Enter</kbd>
          </button>
        </div>
        {error ? <ErrorBox error={error} /> : null}
      </section>
      <section class="pg-outputs" aria-label="Outputs">
        {source ? (
          <div class="pg-output" data-output="original">
            <h4>Original</h4>
            <div class="muted pg-output-meta">
              {originalModel ? <code>{originalModel}</code> : null} · {fmtMs(latencyMs(source))} · {fmtInt(callTokens(source))} tokens ·{' '}
              {fmtTime(source.started_at)}
            </div>
            {originalOutput ? <Conversation messages={originalOutput} /> : <span class="muted">No chat output recorded.</span>}
          </div>
        ) : null}
        <div class="pg-output" data-output="new">
          <h4>New</h4>
          {result ? (
            <>
              <div class="muted pg-output-meta">
                <code>{String(result.response.model ?? model)}</code> ·{' '}
                <span
                  class="pg-round-trip"
                  title="Round trip measured by this browser: the request through weft's front to the model and back. The call's own latency (the replays below, the trace) is weft's: from the request's arrival to the answer's end."
                >
                  {fmtMs(result.ms)} round trip
                </span>{' '}
                · {fmtInt(usage?.total_tokens ?? null)} tokens
                {result.callId ? (
                  <>
                    {' '}
                    · traced as{' '}
                    <a class="pg-new-call" href={projectHref(projectId, ['call', result.callId])} data-call-id={result.callId}>
                      call {result.callId.slice(0, 8)}
                    </a>
                  </>
                ) : null}
              </div>
              {newOutput ? <Conversation messages={newOutput} /> : <span class="muted">No message in the answer.</span>}
            </>
          ) : (
            <span class="muted">{running ? 'Running…' : 'Run the request to see its output here.'}</span>
          )}
        </div>
      </section>
      {source ? <Replays projectId={projectId} callId={source.id} refresh={runs} /> : null}
    </div>
  );
}

/** The calls made from this one in the playground before, newest first. */
function Replays({ projectId, callId, refresh }: { projectId: string; callId: string; refresh: number }) {
  const { data, error } = useAsync((signal) => replaysOf(projectId, callId, signal), [projectId, callId, refresh]);
  if (error) return <ErrorBox error={error} />;
  if (!data || data.length === 0) return null;
  return (
    <section class="pg-replays" aria-label="Replays">
      <h4>Replays of this call</h4>
      <table class="grid compact">
        <thead>
          <tr>
            <th>When</th>
            <th>Model</th>
            <th>Output</th>
            <th
              class="num"
              title="The call's latency as weft recorded it: from the request's arrival at weft's front to the answer's end (no browser round trip)"
            >
              Latency (weft)
            </th>
          </tr>
        </thead>
        <tbody>
          {data.map((c) => {
            const out = findConversation(c.output);
            const text = out?.flatMap((m) => m.parts.map((p) => (p.kind === 'text' ? p.text : ''))).join(' ') ?? '';
            return (
              <tr key={c.id} class="pg-replay" data-call-id={c.id}>
                <td title={fmtTime(c.started_at)}>
                  <a href={projectHref(projectId, ['call', c.id])}>{fmtAgo(c.started_at)}</a>
                </td>
                <td>
                  <code>{String((c.inputs as Record<string, unknown>).model ?? '—')}</code>
                </td>
                <td class="pg-replay-text">{text || (c.exception ? <span class="muted">error: {c.exception}</span> : '—')}</td>
                <td class="num">{fmtMs(latencyMs(c))}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
