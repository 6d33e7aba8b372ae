import { useState } from 'preact/hooks';
import {
  AGGREGATIONS,
  createAlert,
  createChannel,
  deleteChannel,
  formOf,
  listAlerts,
  listChannels,
  listEvents,
  mute,
  testChannel,
  updateAlert,
  WEFT_AGGREGATIONS,
  type AlertSummary,
  type NewAlert,
} from '../alerts';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtAgo, fmtTime } from '../format';
import { parseRef } from '../refs';
import { navigate, projectHref, type Route } from '../route';
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
  const unit = a.monitor_ref ? 'scores' : 'calls';
  const window = [a.window_size ? `last ${a.window_size} ${unit}` : '', a.window_duration ? `last ${a.window_duration} s` : '']
    .filter(Boolean)
    .join(' within ');
  const name = (ref: string) => parseRef(ref)?.name ?? ref;
  const scope = a.monitor_ref
    ? `monitor ${name(a.monitor_ref)}${a.scorer_ref ? ` / ${name(a.scorer_ref)}` : ''}`
    : a.op_scope?.length
      ? `op ${a.op_scope
          .map((r) => {
            const p = parseRef(r);
            return p ? `${p.name}:${p.digest.slice(0, 8)}` : r;
          })
          .join(', ')}`
      : '';
  return `${a.aggregation}(${a.metric_path || 'status'}) ${OPS[a.comparison_operator] ?? a.comparison_operator} ${a.threshold}${window ? ` · ${window}` : ''}${scope ? ` · ${scope}` : ''}`;
}

/**
 * A project's alerts (`#/p/<e>/<p>/alerts`): each AlertSpec with its state, last figure and a
 * sparkline of its recent figures against the threshold, mute/unmute, edit (a new version of
 * its AlertSpec); the latest transitions with their deliveries; the channels notifications go
 * to. `?metric=…&op=…` opens the new-alert form filled in (`&aggregation=…&comparison=…` too:
 * the analytics charts' "Alert me" link; `&monitor_ref=…&scorer_ref=…`: a monitor's).
 */
export function AlertsView({ projectId, route }: { projectId: string; route: Route }) {
  const [version, setVersion] = useState(0);
  const refresh = () => setVersion((v) => v + 1);
  const param = (k: string) => route.params.get(k) ?? undefined;
  const prefill = param('metric');
  const monitorRef = param('monitor_ref');
  // The form open: a new alert (filled in from the URL), or an edit of an existing one.
  const [form, setForm] = useState<{ edit: AlertSummary | null } | null>(prefill || monitorRef ? { edit: null } : null);
  // Closing a form filled in from the URL drops its parameters too (a reload does not open it again).
  const closeForm = () => {
    setForm(null);
    if ([...route.params.keys()].length) navigate(projectHref(projectId, ['alerts']), { replace: true });
  };
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
        <button
          type="button"
          class="primary"
          onClick={() => setForm(form && !form.edit ? null : { edit: null })}
          aria-expanded={!!form && !form.edit}
        >
          New alert
        </button>
      </div>
      {form ? (
        <AlertForm
          key={form.edit?.alert_ref ?? 'new'}
          projectId={projectId}
          editing={form.edit?.alert ?? null}
          initial={
            form.edit
              ? formOf(form.edit)
              : {
                  metric_path: prefill ?? 'output.score',
                  op: param('op') ?? '',
                  ...(param('aggregation') ? { aggregation: param('aggregation')! } : {}),
                  ...(param('comparison') ? { comparison_operator: param('comparison')! } : {}),
                  ...(monitorRef ? { monitor_ref: monitorRef, scorer_ref: param('scorer_ref') ?? '' } : {}),
                }
          }
          onCancel={closeForm}
          onDone={() => {
            closeForm();
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
                <td class="mono rule">{ruleText(a)}</td>
                <td class="num">{a.value === null ? '—' : Number(a.value.toPrecision(6))}</td>
                <td>
                  <Sparkline values={a.recent} threshold={a.threshold} />
                </td>
                <td title={fmtTime(a.evaluated_at)}>{a.evaluated_at ? fmtAgo(a.evaluated_at) : 'not yet'}</td>
                <td class="actions">
                  <button type="button" class="link" onClick={() => setForm({ edit: a })} aria-label={`Edit ${a.alert}`}>
                    Edit
                  </button>{' '}
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

/**
 * The alert form: a new AlertSpec, or (`editing`: its name) a new version of an existing one —
 * its threshold, operator, window, op scope, aggregation — published as Weave versions objects.
 * With a monitor (`monitor_ref`) the alert is on that monitor's scores, its metric a path in
 * the scorer's output.
 */
function AlertForm({
  projectId,
  editing,
  initial,
  onDone,
  onCancel,
}: {
  projectId: string;
  editing: string | null;
  initial: Partial<NewAlert>;
  onDone: () => void;
  onCancel: () => void;
}) {
  const [a, setA] = useState<NewAlert>({
    name: editing ?? '',
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
  const onMonitor = a.monitor_ref !== undefined;
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      if (editing) await updateAlert(projectId, editing, a);
      else await createAlert(projectId, { ...a, name: a.name.trim() });
      onDone();
    } catch (err) {
      setError(err);
    }
  };
  const num = (s: string) => (s.trim() === '' ? undefined : Number(s));
  return (
    <form class="new-queue alert-form" aria-label={editing ? `Edit alert ${editing}` : 'New alert'} onSubmit={submit}>
      {editing ? (
        <p class="form-title">
          Editing <strong>{editing}</strong>: saving publishes a new version of its AlertSpec.
        </p>
      ) : null}
      <label>
        Name <input name="alert-name" required value={a.name} readOnly={!!editing} onInput={(e) => set({ name: value(e) })} />
      </label>
      {onMonitor ? (
        <>
          <label class="grow wide">
            Monitor
            <input name="alert-monitor" required value={a.monitor_ref} onInput={(e) => set({ monitor_ref: value(e) })} />
          </label>
          <label class="grow wide">
            Scorer (empty: every one)
            <input name="alert-scorer" value={a.scorer_ref ?? ''} onInput={(e) => set({ scorer_ref: value(e) })} />
          </label>
        </>
      ) : (
        <label class="grow">
          Op refs (…:* for every version; empty: every call)
          <input name="alert-op" value={a.op} onInput={(e) => set({ op: value(e) })} />
        </label>
      )}
      <label>
        {onMonitor ? "Metric (a path in the scorer's output)" : 'Metric (a call path, or latency, tokens, cost, error, status)'}
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
        {onMonitor ? 'Last N scores' : 'Last N calls'}
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
        {editing ? 'Save new version' : 'Create alert'}
      </button>
      <button type="button" class="link" onClick={onCancel}>
        Cancel
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
