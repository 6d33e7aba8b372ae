import { conversationChat, conversationSpans, listAgents, listConversations, type ChatMessage, type TraceChat } from '../agents';
import { Layout } from '../components/layout';
import { LinkRow } from '../components/link-row';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtAgo, fmtInt, fmtMs, fmtTime } from '../format';
import { projectHref, type Route } from '../route';
import { useAsync } from '../use-async';

/**
 * The agents of a project (`#/p/<e>/<p>/agents`): the agents its OTLP spans invoked (GenAI
 * `invoke_agent` spans, OpenInference AGENT spans) with their totals, and its conversations.
 */
export function AgentsView({ projectId }: { projectId: string; route: Route }) {
  const { data, error, loading } = useAsync(
    async (signal) => {
      const [agents, conversations] = await Promise.all([listAgents(projectId, signal), listConversations(projectId, signal)]);
      return { agents: agents.agents, conversations };
    },
    [projectId],
  );
  return (
    <Layout projectId={projectId} tab="agents">
      <h2>Agents</h2>
      {loading && !data ? <Loading what="agents" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && data.agents.length === 0 ? (
        <Empty title="No agents yet">
          <p>
            Agents come from OpenTelemetry spans: a GenAI <code>invoke_agent</code> span (<code>gen_ai.agent.name</code>) or an
            OpenInference <code>AGENT</code> span (the OpenAI Agents SDK's), sent to <code>/otel/v1/traces</code>.
          </p>
        </Empty>
      ) : null}
      {data && data.agents.length > 0 ? (
        <table class="grid agents">
          <thead>
            <tr>
              <th>Agent</th>
              <th class="num">Invocations</th>
              <th class="num">Errors</th>
              <th class="num">Spans</th>
              <th class="num">Input tokens</th>
              <th class="num">Output tokens</th>
              <th class="num">Time</th>
              <th>Last seen</th>
            </tr>
          </thead>
          <tbody>
            {data.agents.map((a) => (
              <tr key={a.agent_name}>
                <td>
                  <strong>{a.agent_name}</strong>
                </td>
                <td class="num">{fmtInt(a.invocation_count)}</td>
                <td class="num">{fmtInt(a.error_count)}</td>
                <td class="num">{fmtInt(a.span_count)}</td>
                <td class="num">{fmtInt(a.total_input_tokens)}</td>
                <td class="num">{fmtInt(a.total_output_tokens)}</td>
                <td class="num">{fmtMs(a.total_duration_ms)}</td>
                <td title={fmtTime(a.last_seen)}>{fmtAgo(a.last_seen)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {data ? (
        <>
          <h3 class="agents-section">Conversations</h3>
          {data.conversations.length === 0 ? (
            <p class="muted">No conversations yet (spans with gen_ai.conversation.id or session.id).</p>
          ) : null}
          {data.conversations.length > 0 ? (
            <table class="grid conversations">
              <thead>
                <tr>
                  <th>Conversation</th>
                  <th class="num">Turns</th>
                  <th>Started</th>
                  <th>Last activity</th>
                </tr>
              </thead>
              <tbody>
                {data.conversations.map((c) => {
                  const to = projectHref(projectId, ['agents', 'conversations', c.thread_id]);
                  return (
                    <LinkRow key={c.thread_id} to={to}>
                      <td>
                        <a href={to}>
                          <code>{c.thread_id}</code>
                        </a>
                      </td>
                      <td class="num">{fmtInt(c.turn_count)}</td>
                      <td>{fmtTime(c.start_time)}</td>
                      <td title={fmtTime(c.last_updated)}>{fmtAgo(c.last_updated)}</td>
                    </LinkRow>
                  );
                })}
              </tbody>
            </table>
          ) : null}
        </>
      ) : null}
    </Layout>
  );
}

/** A conversation as a chat (`#/p/<e>/<p>/agents/conversations/<id>`): one block per turn, then its spans. */
export function AgentConversationView({ projectId, conversationId }: { projectId: string; conversationId: string }) {
  const { data, error, loading } = useAsync(
    async (signal) => {
      const [chat, spans] = await Promise.all([
        conversationChat(projectId, conversationId, signal),
        conversationSpans(projectId, conversationId, signal),
      ]);
      return { chat, spans: spans.conversations[0]?.spans ?? [] };
    },
    [projectId, conversationId],
  );
  return (
    <Layout projectId={projectId} tab="agents">
      <p class="crumbs">
        <a href={projectHref(projectId, ['agents'])}>Agents</a> / conversation <code>{conversationId}</code>
      </p>
      {loading && !data ? <Loading what="the conversation" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && data.chat.turns.length === 0 ? <Empty title="No turns in this conversation" /> : null}
      {data ? data.chat.turns.map((t, i) => <Turn key={t.trace_id} projectId={projectId} turn={t} n={i + 1} />) : null}
      {data && data.spans.length > 0 ? (
        <>
          <h3 class="agents-section">Spans</h3>
          <table class="grid agent-spans">
            <thead>
              <tr>
                <th>Operation</th>
                <th>Trace</th>
                <th class="num">Duration</th>
                <th>Status</th>
              </tr>
            </thead>
            <tbody>
              {data.spans.map((s) => (
                <tr key={s.span_id}>
                  <td>{s.operation_name}</td>
                  <td>
                    <a href={projectHref(projectId, ['trace', s.trace_id])}>
                      <code>{s.trace_id.slice(0, 12)}</code>
                    </a>
                  </td>
                  <td class="num">{fmtMs(s.duration_ms)}</td>
                  <td class={s.status === 'ERROR' ? 'status-error' : ''}>{s.status}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </Layout>
  );
}

function Turn({ projectId, turn, n }: { projectId: string; turn: TraceChat; n: number }) {
  return (
    <section class="agent-turn">
      <h3 class="agents-section">
        Turn {n}
        {turn.agent_name ? <span class="muted"> · {turn.agent_name}</span> : null}
        {turn.agent_version ? <span class="muted"> v{turn.agent_version}</span> : null}
        <span class="muted">
          {' '}
          · {fmtMs(turn.total_duration_ms)} · {fmtInt(turn.total_input_tokens)} in / {fmtInt(turn.total_output_tokens)} out ·{' '}
        </span>
        <a href={projectHref(projectId, ['trace', turn.trace_id])}>trace</a>
      </h3>
      <div class="conversation">
        {turn.messages.map((m, i) => (
          <AgentMessage key={`${m.span_id ?? ''}-${i}`} m={m} />
        ))}
      </div>
    </section>
  );
}

function AgentMessage({ m }: { m: ChatMessage }) {
  if (m.type === 'user_message')
    return (
      <div class="message role-user">
        <div class="message-role">user</div>
        <p class="message-text">{m.user_message?.text}</p>
      </div>
    );
  if (m.type === 'assistant_message')
    return (
      <div class="message role-assistant">
        <div class="message-role">
          assistant{m.agent_name ? ` · ${m.agent_name}` : ''}
          {m.assistant_message?.model ? ` · ${m.assistant_message.model}` : ''}
        </div>
        <p class="message-text">{m.assistant_message?.text}</p>
      </div>
    );
  if (m.type === 'tool_call')
    return (
      <div class="message role-tool">
        <div class="message-role">
          <span class="tool-label">tool</span> {m.tool_call?.tool_name}
        </div>
        {m.tool_call?.tool_arguments ? <pre class="message-text">{m.tool_call.tool_arguments}</pre> : null}
        {m.tool_call?.tool_result ? <pre class="message-text">→ {m.tool_call.tool_result}</pre> : null}
      </div>
    );
  if (m.type === 'agent_start')
    return (
      <div class="agent-start muted">
        ▶ agent <strong>{m.agent_name}</strong>
        {m.agent_start?.model ? ` (${m.agent_start.model})` : ''}
      </div>
    );
  return null;
}
