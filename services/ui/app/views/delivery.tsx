import { Layout } from '../components/layout';
import { ErrorBox, Loading } from '../components/states';
import { fmtSeconds, useDelivery } from '../delivery';
import { fmtAgo, fmtInt, fmtTime } from '../format';
import type { ProjectDelivery } from '../types';

type Counts = ProjectDelivery['total'];

const ENTRANCE_NAMES: Record<string, string> = {
  calls: 'HTTP calls (Weave SDKs)',
  otlp_http: 'OTLP/HTTP',
  otlp_grpc: 'OTLP/gRPC',
  inference: 'Inference front (/v1)',
  unknown: 'Entrance not recorded',
};

/** `3` with its reasons (`too_large 1 · rate_limited 2`), or a dash. */
function Reasons({ counts }: { counts: Record<string, number> }) {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  const total = entries.reduce((n, [, k]) => n + k, 0);
  if (total === 0) return <span class="muted">0</span>;
  return (
    <span>
      <strong>{fmtInt(total)}</strong>{' '}
      <span class="reasons">
        {entries.map(([reason, n]) => (
          <span key={reason} class="reason" title={reason}>
            {reason} {fmtInt(n)}
          </span>
        ))}
      </span>
    </span>
  );
}

function Row({ name, c, strong }: { name: string; c: Counts; strong?: boolean }) {
  const sampled = c.sampled_out + c.would_sample_out;
  return (
    <tr class={strong ? 'total' : undefined}>
      <td>{name}</td>
      <td class="num">{fmtInt(c.accepted)}</td>
      <td class="num">{fmtInt(c.stored)}</td>
      <td class="num">{c.dead_lettered ? <span class="bad">{fmtInt(c.dead_lettered)}</span> : <span class="muted">0</span>}</td>
      <td class="num">
        {sampled ? (
          <span title={c.would_sample_out ? 'dry run: kept, counted as what the rate would drop' : undefined}>
            {fmtInt(c.sampled_out)}
            {c.would_sample_out ? ` (+${fmtInt(c.would_sample_out)} dry run)` : ''}
          </span>
        ) : (
          <span class="muted">0</span>
        )}
      </td>
      <td>
        <Reasons counts={c.refused} />
      </td>
      <td>
        <Reasons counts={c.spans_rejected} />
      </td>
    </tr>
  );
}

/** The lag in words: how long acknowledged calls wait before they can be read. */
function Lag({ d }: { d: ProjectDelivery }) {
  const { lag } = d;
  const waiting = lag.pending_parts ? `${fmtInt(lag.pending_parts)} call parts acknowledged and not yet stored` : 'nothing waiting';
  return (
    <div class={d.lag_over_warning ? 'lag-panel late' : 'lag-panel'}>
      <div class="lag-figure">
        <span class="label">Ack → queryable lag</span>
        <span class="value">{lag.seconds === null ? 'measured by the writers' : fmtSeconds(lag.seconds)}</span>
        <span class="muted">{lag.seconds === null ? 'this process does not store calls' : waiting}</span>
      </div>
      <div class="lag-figure">
        <span class="label">Last stored</span>
        <span class="value">{lag.last_stored_seconds === null ? '—' : fmtSeconds(lag.last_stored_seconds)}</span>
        <span class="muted" title={fmtTime(lag.last_stored_at)}>
          {lag.last_stored_at ? `after acknowledgement, ${fmtAgo(lag.last_stored_at)}` : 'nothing stored yet'}
        </span>
      </div>
      <div class="lag-figure">
        <span class="label">Warning above</span>
        <span class="value">{fmtSeconds(d.lag_warning_seconds)}</span>
        <span class="muted">WEFT_DELIVERY_LAG_WARN_MS</span>
      </div>
    </div>
  );
}

/** What became of a project's calls, per entrance, since the server started (/project/delivery). */
export function DeliveryView({ projectId }: { projectId: string }) {
  const { data, error } = useDelivery(projectId, 5_000);
  return (
    <Layout projectId={projectId} tab="delivery">
      <h2>Delivery</h2>
      {!data && !error ? <Loading what="delivery counts" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data ? (
        <>
          <Lag d={data} />
          <table class="grid delivery">
            <thead>
              <tr>
                <th>Entrance</th>
                <th class="num">Accepted</th>
                <th class="num">Stored</th>
                <th class="num">Dead-lettered</th>
                <th class="num">Sampled out</th>
                <th>Refused requests</th>
                <th>Rejected spans</th>
              </tr>
            </thead>
            <tbody>
              {data.entrances.map((e) => (
                <Row key={e.entrance} name={ENTRANCE_NAMES[e.entrance] ?? e.entrance} c={e} />
              ))}
              <Row name="All entrances" c={data.total} strong />
            </tbody>
          </table>
          <p class="muted delivery-note">
            Counted by this server since {fmtTime(data.since)}
            {data.reports.includes('stored') ? '' : ' (it accepts calls; the writers count what they store)'}. Accepted, stored,
            dead-lettered and sampled-out count call parts: a call is two, its start and its end. Refused counts requests, by reason;
            rejected spans are OTLP spans refused inside an accepted request. Once everything acknowledged is handled, accepted = stored +
            dead-lettered + sampled out.
          </p>
        </>
      ) : null}
    </Layout>
  );
}
