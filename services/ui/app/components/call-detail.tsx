import { useState } from 'preact/hooks';
import { post } from '../api';
import { callStatus, fmtCost, fmtInt, fmtMs, fmtTime, latencyMs, opLabel, usageByModel, type Status } from '../format';
import { exceptionText } from '../exception';
import { findRefs, parseRef, refHref } from '../refs';
import { projectHref } from '../route';
import type { Call, Feedback } from '../types';
import { useAsync } from '../use-async';
import { StatusBadge } from '../views/calls';
import { Annotations } from './annotations';
import { JsonView } from './json-view';
import { Conversation, findConversation } from './messages';
import { replayedCallId } from '../playground';
import { ErrorBox, Loading } from './states';
import { UserName } from './user-name';

/** Everything about one call: inputs, output (a chat as a conversation), exception, usage and cost, refs, feedback, attributes. */
export function CallDetail({ call, projectId, status = callStatus(call) }: { call: Call; projectId: string; status?: Status }) {
  const usage = usageByModel(call);
  const models = Object.entries(usage);
  const feedback = ((call.summary?.weave as Record<string, unknown> | undefined)?.feedback ?? []) as Feedback[];
  const [feedbackCount, setFeedbackCount] = useState(feedback.length);
  const refs = [...new Set([...findRefs(call.inputs), ...findRefs(call.output)])];
  const sourceCallId = replayedCallId(call);
  return (
    <div class="call-detail" aria-label="Call detail">
      <div class="detail-head">
        <h3 title={call.op_name}>{call.display_name || opLabel(call.op_name)}</h3>
        <StatusBadge status={status} />
        {findConversation(call.inputs) ? (
          <a class="button" href={projectHref(projectId, ['playground', call.id])} title="Run this LLM call again, changed">
            Open in playground
          </a>
        ) : null}
      </div>
      <dl class="facts">
        <dt>Op</dt>
        <dd>
          <OpLink opName={call.op_name} projectId={projectId} />
        </dd>
        <dt>Started</dt>
        <dd>{fmtTime(call.started_at, true)}</dd>
        <dt>Latency</dt>
        <dd>{fmtMs(latencyMs(call))}</dd>
        <dt>Call id</dt>
        <dd>
          <code>{call.id}</code>
        </dd>
        <dt>Trace</dt>
        <dd>
          <a href={projectHref(projectId, ['trace', call.trace_id], { call: call.id })}>
            <code>{call.trace_id}</code>
          </a>
        </dd>
        {call.thread_id ? (
          <>
            <dt>Thread</dt>
            <dd>
              <a href={projectHref(projectId, ['threads', call.thread_id])}>
                <code>{call.thread_id}</code>
              </a>
            </dd>
          </>
        ) : null}
        {sourceCallId ? (
          <>
            <dt>Replay of</dt>
            <dd>
              <a href={projectHref(projectId, ['call', sourceCallId])}>
                <code>{sourceCallId}</code>
              </a>{' '}
              <a href={projectHref(projectId, ['playground', sourceCallId])}>playground</a>
            </dd>
          </>
        ) : null}
        {call.svc_user_id ? (
          <>
            <dt>User</dt>
            <dd>
              <UserName id={call.svc_user_id} projectId={projectId} />
            </dd>
          </>
        ) : null}
      </dl>
      <Section title={`Feedback (${feedbackCount})`} open>
        <Annotations
          projectId={projectId}
          callId={call.id}
          opName={call.op_name}
          initial={feedback}
          onChange={(list) => {
            setFeedbackCount(list.length);
            // The trace's copy of the call: selecting it again shows the feedback as it is now.
            const summary = (call.summary ??= {}) as Record<string, unknown>;
            summary.weave = { ...((summary.weave as Record<string, unknown> | undefined) ?? {}), feedback: list };
          }}
        />
      </Section>
      {call.exception ? (
        <Section title="Exception" open>
          <pre class="exception">{exceptionText(call.exception)}</pre>
        </Section>
      ) : null}
      <Section title="Inputs" open>
        <Payload value={call.inputs} />
      </Section>
      <Section title="Output" open>
        <Payload value={call.output} />
      </Section>
      {models.length ? (
        <Section title="Usage and cost" open>
          <table class="grid compact usage">
            <thead>
              <tr>
                <th>Model</th>
                <th class="num">Requests</th>
                <th class="num">Prompt</th>
                <th class="num">Completion</th>
                <th class="num">Total</th>
                <th class="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {models.map(([m, u]) => (
                <tr key={m}>
                  <td>
                    <code>{m}</code>
                  </td>
                  <td class="num">{fmtInt(u.requests)}</td>
                  <td class="num">{fmtInt(u.prompt_tokens)}</td>
                  <td class="num">{fmtInt(u.completion_tokens)}</td>
                  <td class="num">{fmtInt(u.total_tokens)}</td>
                  <td class="num" title={u.cost === null ? 'no price known for this model' : undefined}>
                    {u.cost === null ? 'no price' : fmtCost(u.cost)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      ) : null}
      {refs.length ? (
        <Section title={`Refs (${refs.length})`} open>
          <RefsView refs={refs} />
        </Section>
      ) : null}
      <Section title="Attributes" open={false}>
        <JsonView value={call.attributes} />
      </Section>
      <Section title="Summary" open={false}>
        <JsonView value={call.summary} />
      </Section>
    </div>
  );
}

/** The op by its short name: an op ref opens its version, a plain name (OTLP spans) its calls. */
function OpLink({ opName, projectId }: { opName: string; projectId: string }) {
  const ref = parseRef(opName);
  const to = ref?.kind === 'op' ? refHref(ref) : projectHref(projectId, ['calls'], { op: opName });
  return (
    <a href={to} title={opName}>
      {opLabel(opName)}
    </a>
  );
}

export function Section({ title, open, children }: { title: string; open: boolean; children: preact.ComponentChildren }) {
  return (
    <details class="section" open={open}>
      <summary>{title}</summary>
      <div class="section-body">{children}</div>
    </details>
  );
}

/** A chat is shown as a conversation (with the raw JSON a click away), anything else as JSON. */
export function Payload({ value }: { value: unknown }) {
  const [raw, setRaw] = useState(false);
  const conversation = findConversation(value);
  if (value === null || value === undefined) return <span class="muted">null</span>;
  if (!conversation) return <JsonView value={value} />;
  return (
    <div>
      <div class="payload-switch">
        <button type="button" class={raw ? 'link' : 'link active'} onClick={() => setRaw(false)}>
          Conversation
        </button>
        <button type="button" class={raw ? 'link active' : 'link'} onClick={() => setRaw(true)}>
          JSON
        </button>
      </div>
      {raw ? <JsonView value={value} /> : <Conversation messages={conversation} />}
    </div>
  );
}

/** Refs expanded to the values they name (/refs/read_batch), each linking to its object. */
function RefsView({ refs }: { refs: string[] }) {
  const { data, error, loading } = useAsync((signal) => post<{ vals: unknown[] }>('/refs/read_batch', { refs }, signal), [refs.join('|')]);
  return (
    <ul class="refs">
      {refs.map((uri, i) => {
        const r = parseRef(uri)!;
        return (
          <li key={uri}>
            <a href={refHref(r)} class="ref-link">
              {r.kind} <code>{r.name}</code>
              {r.kind !== 'table' ? <span class="muted">:{r.digest.slice(0, 8)}</span> : null}
            </a>
            {loading ? <Loading what="value" /> : null}
            {error ? <ErrorBox error={error} /> : null}
            {data ? <JsonView value={data.vals[i]} /> : null}
          </li>
        );
      })}
    </ul>
  );
}
