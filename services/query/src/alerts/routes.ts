import type { FastifyInstance } from 'fastify';
import { badRequest, generateId, microsToClickHouse, notFound, nowMicros, parseTimestampMicros } from '@weft/core';
import { addRoute, type Authenticator } from '@weft/http';
import { queryObjects } from '@weft/objects';
import type { Store } from '@weft/store';
import { alertNameOf, plainVal, readAlertRule } from './alert-spec';
import { channelBody, send, type AlertNotification } from './notify';
import { checkChannelUrl, type UrlPolicy } from './url-guard';
import {
  activeMutes,
  channelsOf,
  deleteChannel,
  deliveriesOfEvents,
  insertChannel,
  queryEvents,
  statesOf,
  writeMute,
  type ChannelRow,
} from '@weft/objects';

export interface AlertRouteDeps {
  store: Store;
  auth: Authenticator;
  /** Which channel URLs may be called (WEFT_ALERTS_ALLOW_PRIVATE_URLS). */
  urlPolicy: UrlPolicy;
}

/**
 * /alerts/…: a project's channels (create, list, delete, test), its alerts as weft reads and
 * evaluates them, their events with each delivery, and mutes. Tenancy is the edge's (every
 * project_id and ref of the body is the caller's entity's, libs/http tenancy.ts); every
 * statement here is keyed by the request's project, so another project's channel or alert is
 * never reached, whatever id is given.
 */
export async function alertRoutes(app: FastifyInstance, deps: AlertRouteDeps): Promise<void> {
  const { store, auth, urlPolicy } = deps;
  const publicChannel = (c: ChannelRow) => ({
    id: c.id,
    project_id: c.project_id,
    name: c.name,
    url: c.url,
    format: c.format,
    has_secret: c.secret !== '',
    created_at: c.created_at,
  });

  addRoute(app, auth, 'alertChannelCreate', async (body) => {
    // Server-side request forgery: no channel to an address off the public Internet unless allowed.
    const refused = await checkChannelUrl(urlPolicy, body.url);
    if (refused) throw badRequest(`url: ${refused}`, 'url');
    const now = nowMicros();
    const row: ChannelRow = {
      project_id: body.project_id,
      id: generateId(),
      name: body.name,
      url: body.url,
      format: body.format,
      secret: body.secret ?? '',
      created_at: microsToClickHouse(now),
    };
    await insertChannel(store, row);
    return publicChannel({ ...row, created_at: new Date(now / 1000).toISOString() });
  });

  addRoute(app, auth, 'alertChannelList', async (body) => ({ channels: (await channelsOf(store, body.project_id)).map(publicChannel) }));

  addRoute(app, auth, 'alertChannelDelete', async (body) => {
    const deleted = await deleteChannel(store, body.project_id, body.channel_id);
    if (!deleted) throw notFound(`channel ${body.channel_id} not found in ${body.project_id}`);
    return { deleted };
  });

  addRoute(app, auth, 'alertChannelTest', async (body) => {
    const channel = (await channelsOf(store, body.project_id)).find((c) => c.id === body.channel_id);
    if (!channel) throw notFound(`channel ${body.channel_id} not found in ${body.project_id}`);
    const id = generateId();
    const n: AlertNotification = {
      id,
      state: 'test',
      alert: 'weft-test',
      alert_ref: '',
      project_id: body.project_id,
      value: null,
      threshold: 0,
      comparison_operator: 'GREATER_THAN',
      aggregation: 'mean',
      metric_path: '',
      window: { size: null, duration_seconds: null, calls: 0 },
      calls_link: '',
      time: new Date().toISOString(),
      description: `A test notification from weft to the channel ${channel.name}`,
    };
    const r = await send(channel, id, channelBody(channel, n), urlPolicy);
    return { ok: r.ok, status_code: r.status_code, error: r.error };
  });

  addRoute(app, auth, 'alertsList', async (body) => {
    const objs = await queryObjects(store, {
      project_id: body.project_id,
      filter: { base_object_classes: ['AlertSpec'], latest_only: true },
    });
    const states = await statesOf(store, body.project_id);
    const mutes = await activeMutes(store, body.project_id);
    return {
      alerts: objs.map((o) => {
        const val = plainVal(o.val) as Record<string, unknown>;
        const read = readAlertRule(body.project_id, o.object_id, o.digest, val);
        const r = read.rule;
        const s = states.get(o.object_id);
        return {
          alert: o.object_id,
          alert_ref: r.ref,
          description: r.description ?? null,
          metric_path: r.metricPath ?? '',
          aggregation: r.aggregation ?? '',
          comparison_operator: r.comparison ?? '',
          threshold: r.threshold ?? 0,
          window_size: r.windowSize ?? null,
          window_duration: r.windowDuration ?? null,
          op_scope: r.opScope ?? null,
          monitor_ref: r.monitorRef ?? null,
          scorer_ref: r.scorerRef ?? null,
          status_match_value: statusMatchOf(val),
          invalid: read.ok ? null : read.reason,
          state: s?.state ?? 'ok',
          value: s?.value ?? null,
          recent: s?.recent ?? [],
          calls: s?.calls ?? 0,
          evaluated_at: s?.evaluated_at ?? null,
          muted_until: mutes.get(`${body.project_id}\n${o.object_id}`) ?? null,
        };
      }),
    };
  });

  addRoute(app, auth, 'alertEventsQuery', async (body) => {
    const alert = body.alert_ref === undefined ? undefined : nameOrRefused(body.alert_ref, body.project_id);
    const events = await queryEvents(store, {
      project_id: body.project_id,
      ...(alert ? { alert } : {}),
      ...(body.state ? { state: body.state } : {}),
      ...(body.since ? { sinceIso: new Date(parseTimestampMicros(body.since)! / 1000).toISOString() } : {}),
      limit: body.limit,
    });
    const deliveries = await deliveriesOfEvents(
      store,
      body.project_id,
      events.map((e) => e.id),
    );
    return {
      events: events.map((e) => ({
        id: e.id,
        project_id: e.project_id,
        alert: e.alert,
        alert_ref: e.alert_ref,
        state: e.state,
        value: Number(e.value),
        threshold: Number(e.threshold),
        muted: Number(e.muted) === 1,
        created_at: e.created_at,
        body: JSON.parse(e.body) as Record<string, unknown>,
        deliveries: deliveries
          .filter((d) => d.event_id === e.id)
          .map((d) => ({
            channel_id: d.channel_id,
            status: d.status,
            attempts: Number(d.attempts),
            last_status_code: d.last_code === null ? null : Number(d.last_code),
            last_error: d.last_error,
            updated_at: d.updated_at,
          })),
      })),
    };
  });

  addRoute(app, auth, 'alertMute', async (body) => {
    const alert = nameOrRefused(body.alert_ref, body.project_id);
    const until = parseTimestampMicros(body.until)!;
    await writeMute(store, body.project_id, alert, until);
    return { alert, muted_until: until > nowMicros() ? new Date(until / 1000).toISOString() : null };
  });

  addRoute(app, auth, 'alertUnmute', async (body) => {
    const alert = nameOrRefused(body.alert_ref, body.project_id);
    await writeMute(store, body.project_id, alert, null);
    return { alert, muted_until: null };
  });
}

/** The alert an alert_ref names in the project (400 when it points elsewhere or is no name). */
function nameOrRefused(alertRef: string, projectId: string): string {
  const name = alertNameOf(alertRef, projectId);
  if (!name) throw badRequest(`alert_ref: '${alertRef}' is not an AlertSpec of ${projectId} (a ref or a name)`, 'alert_ref');
  return name;
}

/** The spec's status_match_value as stored (the rule reads span codes as statuses; an edit shows what was written). */
function statusMatchOf(val: Record<string, unknown>): string | null {
  const spec = val.spec as Record<string, unknown> | undefined;
  const v = spec?.status_match_value;
  return v === undefined || v === null ? null : String(v);
}
