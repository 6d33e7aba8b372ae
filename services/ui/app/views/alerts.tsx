import { useState } from 'preact/hooks';
import {
  AGGREGATIONS,
  createAlert,
  createChannel,
  deleteChannel,
  listAlerts,
  listChannels,
  listEvents,
  mute,
  testChannel,
  WEFT_AGGREGATIONS,
  type AlertSummary,
  type NewAlert,
} from '../alerts';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtAgo, fmtTime } from '../format';
import type { Route } from '../route';
import { useAsync } from '../use-async';

const OPS: Record<string, string> = { GREATER_THAN: '>', LESS_THAN: '<', EQUAL: '=' };

/** The figure's last values against the threshold: a line, and the threshold dashed across it. */
export function Sparkline({ values, threshold }: { values: number[]; threshold: number }) {
  if (values.length < 2) return <span class="muted">—</span>;
  const w = 120;
  const h = 28;
  const lo = Math.min(threshold, ...values);
  const hi = Math.max(threshold, ...values);
  const span = hi - lo || 1;
  const y = (v: number) => h - 2 - ((v - lo) / span) * (h - 4);
  const x = (i: number) => (i / (values.length - 1)) * w;
  return (
    <svg class="sparkline" width={w} height={h} viewBox={`0 0 ${w} ${h}`} aria-label={`last ${values.length} figures`}>
      <line x1={0} x2={w} y1={y(threshold)} y2={y(threshold)} class="threshold" />
      <polyline points={values.map((v, i) => `${x(i)},${y(v)}`).join(' ')} class="figure" />
    </svg>
  );
}

function ruleText(a: AlertSummary): string {
  const window = [a.window_size ? `last ${a.window_size} calls` : '', a.window_duration ? `last ${a.window_duration} s` : '']
    .filter(Boolean)
    .join(' within ');
  return `${a.aggregation}(${a.metric_path || 'status'}) ${OPS[a.comparison_operator] ?? a.comparison_operator} ${a.threshold}${window ? ` · ${window}` : ''}`;
}

/**
 * A project's alerts (`#/p/<e>/<p>/alerts`): each AlertSpec with its state, last figure and a
 * sparkline of its recent figures against the threshold, mute/unmute; the latest transitions
 * with their deliveries; the channels notifications go to. `?metric=…&op=…` opens the new-alert
 * form filled in (`&aggregation=…&comparison=…` too: the analytics charts' "Alert me" link).
 */
export function AlertsView({ projectId, route }: { projectId: string; route: Route }) {
  const [version, setVersion] = useState(0);
  const refresh = () => setVersion((v) => v + 1);
  const prefill = route.params.get('metric');
  const [creating, setCreating] = useState(prefill !== null);
  const { data, error, loading } = useAsync(
    async (signal) => {
      const [alerts, events, channels] = await Promise.all([
        listAlerts(projectId, signal),
        listEvents(projectId, signal),
        listChannels(projectId, signal),
      ]);
      return { alerts, events, channels };
    },
    [projectId, version],
  );
  const [actionError, setActionError] = useState<unknown>(null);
  const act = async (f: () => Promise<unknown>) => {
    setActionError(null);
    try {
      await f();
      refresh();
    } catch (e) {
      setActionError(e);
    }
  };
  const channelName = (id: string) => data?.channels.find((c) => c.id === id)?.name ?? id.slice(0, 8);
  return (
    <Layout projectId={projectId} tab="alerts">
      <div class="eval-head">
        <h2>Alerts</h2>
        <span class="spacer" />
        <button type="button" class="primary" onClick={() => setCreating(!creating)} aria-expanded={creating}>
          New alert
        </button>
      </div>
      {creating ? (
        <NewAlertForm
          projectId={projectId}
          initial={{
            metric_path: prefill ?? 'output.score',
            op: route.params.get('op') ?? '',
            ...(route.params.get('aggregation') ? { aggregation: route.params.get('aggregation')! } : {}),
            ...(route.params.get('comparison') ? { comparison_operator: route.params.get('comparison')! } : {}),
          }}
          onDone={() => {
            setCreating(false);
            refresh();
          }}
        />
      ) : null}
      {loading && !data ? <Loading what="alerts" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {actionError ? <ErrorBox error={actionError} /> : null}
      {data && data.alerts.length === 0 ? (
        <Empty title="No alerts yet">
          <p>
            Make one here, or publish an <code>AlertSpec</code> with the Weave SDK; weft evaluates it every interval and notifies the
            channels below.
          </p>
        </Empty>
      ) : null}
      {data && data.alerts.length > 0 ? (
        <table class="grid alerts">
          <thead>
            <tr>
              <th>Alert</th>
              <th>State</th>
              <th>Rule</th>
              <th class="num">Last figure</th>
              <th>Recent</th>
              <th>Evaluated</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {data.alerts.map((a) => (
              <tr key={a.alert} data-alert={a.alert}>
                <td>
                  <strong>{a.alert}</strong>
                  {a.description ? <div class="muted">{a.description}</div> : null}
                  {a.invalid ? <div class="bad">Not evaluated: {a.invalid}</div> : null}
                </td>
                <td>
                  <span class={`badge alert-${a.state}`}>{a.state}</span>
                  {a.muted_until ? <div class="muted">muted until {fmtTime(a.muted_until)}</div> : null}
                </td>
                <td class="mono">{ruleText(a)}</td>
                <td class="num">{a.value === null ? '—' : Number(a.value.toPrecision(6))}</td>
                <td>
                  <Sparkline values={a.recent} threshold={a.threshold} />
                </td>
                <td title={fmtTime(a.evaluated_at)}>{a.evaluated_at ? fmtAgo(a.evaluated_at) : 'not yet'}</td>
                <td>
                  {a.muted_until ? (
                    <button type="button" class="link" onClick={() => act(() => mute(projectId, a.alert, null))}>
                      Unmute
                    </button>
                  ) : (
                    <button type="button" class="link" onClick={() => act(() => mute(projectId, a.alert, new Date(Date.now() + 3600_000)))}>
                      Mute 1 h
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}

      {data ? (
        <>
          <h3 class="alerts-section">Events</h3>
          {data.events.length === 0 ? <p class="muted">No transitions yet.</p> : null}
          {data.events.length > 0 ? (
            <table class="grid alert-events">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Alert</th>
                  <th>State</th>
                  <th class="num">Figure</th>
                  <th>Deliveries</th>
                </tr>
              </thead>
              <tbody>
                {data.events.map((e) => (
                  <tr key={e.id}>
                    <td title={fmtTime(e.created_at)}>{fmtAgo(e.created_at)}</td>
                    <td>{e.alert}</td>
                    <td>
                      <span class={`badge alert-${e.state}`}>{e.state}</span>
                    </td>
                    <td class="num">
                      {Number(e.value.toPrecision(6))} <span class="muted">/ {e.threshold}</span>
                    </td>
                    <td>
                      {e.muted ? <span class="muted">muted: not sent</span> : null}
                      {e.deliveries.map((d) => (
                        <div key={d.channel_id} title={d.last_error ?? undefined}>
                          {channelName(d.channel_id)}: <span class={d.status === 'failed' ? 'bad' : undefined}>{d.status}</span>
                          {d.last_status_code ? ` (${d.last_status_code})` : ''}
                          {d.attempts > 1 ? ` after ${d.attempts} attempts` : ''}
                        </div>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}

          <h3 class="alerts-section">Channels</h3>
          {data.channels.length === 0 ? <p class="muted">No channel: transitions are recorded, nobody is told.</p> : null}
          {data.channels.length > 0 ? (
            <table class="grid alert-channels">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>URL</th>
                  <th>Body</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {data.channels.map((c) => (
                  <tr key={c.id}>
                    <td>{c.name}</td>
                    <td class="mono">{c.url}</td>
                    <td>
                      {c.format}
                      {c.has_secret ? ' · signed' : ''}
                    </td>
                    <td>
                      <button
                        type="button"
                        class="link"
                        onClick={() =>
                          act(async () => {
                            const r = await testChannel(projectId, c.id);
                            if (!r.ok) throw new Error(`The test notification failed: ${r.error ?? r.status_code}`);
                          })
                        }
                      >
                        Send a test
                      </button>{' '}
                      <button type="button" class="link" onClick={() => act(() => deleteChannel(projectId, c.id))}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          <NewChannelForm projectId={projectId} onDone={refresh} />
        </>
      ) : null}
    </Layout>
  );
}

const value = (e: Event) => (e.target as HTMLInputElement).value;

function NewAlertForm({ projectId, initial, onDone }: { projectId: string; initial: Partial<NewAlert>; onDone: () => void }) {
  const [a, setA] = useState<NewAlert>({
    name: '',
    op: '',
    metric_path: 'output.score',
    aggregation: 'mean',
    comparison_operator: 'LESS_THAN',
    threshold: 0.5,
    window_size: 10,
    ...initial,
  });
  const [error, setError] = useState<unknown>(null);
  const set = (patch: Partial<NewAlert>) => setA((x) => ({ ...x, ...patch }));
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await createAlert(projectId, { ...a, name: a.name.trim() });
      onDone();
    } catch (err) {
      setError(err);
    }
  };
  const num = (s: string) => (s.trim() === '' ? undefined : Number(s));
  return (
    <form class="new-queue" aria-label="New alert" onSubmit={submit}>
      <label>
        Name <input name="alert-name" required value={a.name} onInput={(e) => set({ name: value(e) })} />
      </label>
      <label class="grow">
        Op ref (…:* for every version; empty: every call)
        <input name="alert-op" value={a.op} onInput={(e) => set({ op: value(e) })} />
      </label>
      <label>
        Metric (a call path, or latency, tokens, cost, error, status)
        <input name="alert-metric" value={a.metric_path} onInput={(e) => set({ metric_path: value(e) })} />
      </label>
      <label>
        Aggregation
        <select name="alert-aggregation" value={a.aggregation} onChange={(e) => set({ aggregation: value(e) })}>
          {[...AGGREGATIONS, ...WEFT_AGGREGATIONS].map((x) => (
            <option key={x}>{x}</option>
          ))}
        </select>
      </label>
      {a.aggregation === 'percentage' || a.aggregation === 'count' ? (
        <label>
          Matching
          <input name="alert-match" value={a.status_match_value ?? ''} onInput={(e) => set({ status_match_value: value(e) })} />
        </label>
      ) : null}
      <label>
        When
        <select name="alert-comparison" value={a.comparison_operator} onChange={(e) => set({ comparison_operator: value(e) })}>
          <option value="LESS_THAN">goes below</option>
          <option value="GREATER_THAN">goes above</option>
          <option value="EQUAL">equals</option>
        </select>
      </label>
      <label>
        Threshold
        <input name="alert-threshold" type="number" step="any" value={a.threshold} onInput={(e) => set({ threshold: Number(value(e)) })} />
      </label>
      <label>
        Last N calls
        <input
          name="alert-window-size"
          type="number"
          min={1}
          value={a.window_size ?? ''}
          onInput={(e) => set({ window_size: num(value(e)) })}
        />
      </label>
      <label>
        Within seconds
        <input
          name="alert-window-duration"
          type="number"
          min={1}
          value={a.window_duration ?? ''}
          onInput={(e) => set({ window_duration: num(value(e)) })}
        />
      </label>
      <button type="submit" class="primary" disabled={a.name.trim() === ''}>
        Create alert
      </button>
      {error ? <ErrorBox error={error} /> : null}
    </form>
  );
}

function NewChannelForm({ projectId, onDone }: { projectId: string; onDone: () => void }) {
  const [c, setC] = useState({ name: '', url: '', format: 'json', secret: '' });
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await createChannel(projectId, { ...c, ...(c.secret ? {} : { secret: undefined }) });
      setC({ name: '', url: '', format: 'json', secret: '' });
      onDone();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="new-queue" aria-label="New channel" onSubmit={submit}>
      <label>
        Channel name <input name="channel-name" required value={c.name} onInput={(e) => setC({ ...c, name: value(e) })} />
      </label>
      <label class="grow">
        Webhook URL <input name="channel-url" required value={c.url} onInput={(e) => setC({ ...c, url: value(e) })} />
      </label>
      <label>
        Body
        <select name="channel-format" value={c.format} onChange={(e) => setC({ ...c, format: value(e) })}>
          <option value="json">JSON</option>
          <option value="slack">Slack</option>
        </select>
      </label>
      <label>
        Secret (signs JSON bodies)
        <input name="channel-secret" type="password" value={c.secret} onInput={(e) => setC({ ...c, secret: value(e) })} />
      </label>
      <button type="submit" class="primary" disabled={!c.name.trim() || !c.url.trim()}>
        Add channel
      </button>
      {error ? <ErrorBox error={error} /> : null}
    </form>
  );
}
