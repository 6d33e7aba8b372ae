import { z } from 'zod';
import { projectId, timestamp } from './common';
import type { RouteSpec } from './spec';

/**
 * Alerts (docs/alerts.md): the rules are Weave `AlertSpec` objects (/obj/create, weave.publish);
 * these are the channels their notifications go to, their events and their mutes. The names are
 * fixed (scripts rely on them).
 */

/** A ref or the name of an AlertSpec of the project (`weave:///<project>/object/<name>:<digest|*>` or `<name>`). */
const alertRef = z.string().min(1).max(1000).describe('an AlertSpec ref (`weave:///…/object/<name>:<digest>`, any version) or its name');

/** A project, or `<entity>/*`: the entity's channels, which get every project's transitions. */
const channelScope = projectId.describe('`<entity>/<project>`, or `<entity>/*` for a channel of every project of the entity');

export const alertChannelCreateReq = z.object({
  project_id: channelScope,
  name: z.string().min(1).max(200),
  url: z
    .string()
    .max(4000)
    .refine((u) => /^https?:\/\/[^\s]+$/.test(u), 'must be an http:// or https:// URL'),
  format: z
    .enum(['json', 'slack'])
    .default('json')
    .describe("`json`: weft's body, signed when a secret is set; `slack`: an incoming-webhook body"),
  secret: z.string().min(1).max(500).optional().describe('HMAC-SHA256 key: the body is signed in the `X-Weft-Signature` header'),
});
export const alertChannel = z.object({
  id: z.string(),
  project_id: z.string(),
  name: z.string(),
  url: z.string(),
  format: z.enum(['json', 'slack']),
  has_secret: z.boolean().describe('the secret itself is never returned'),
  created_at: z.string(),
});
export const alertChannelListReq = z.object({ project_id: channelScope });
export const alertChannelListRes = z.object({ channels: z.array(alertChannel) });
export const alertChannelRefReq = z.object({ project_id: channelScope, channel_id: z.string().min(1) });
export const alertChannelDeleteRes = z.object({ deleted: z.boolean() });
export const alertChannelTestRes = z.object({
  ok: z.boolean().describe('the receiver answered 2xx'),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
});

export const alertState = z.enum(['ok', 'firing', 'resolved']);

export const alertDelivery = z.object({
  channel_id: z.string(),
  status: z.enum(['pending', 'sent', 'failed']),
  attempts: z.number().int(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  updated_at: z.string(),
});
export const alertEvent = z.object({
  id: z.string(),
  project_id: z.string(),
  alert: z.string(),
  alert_ref: z.string(),
  state: z.enum(['firing', 'resolved']),
  value: z.number(),
  threshold: z.number(),
  muted: z.boolean().describe('the alert was muted: recorded, not delivered'),
  created_at: z.string(),
  body: z.record(z.string(), z.unknown()).describe('the JSON notification as sent'),
  deliveries: z.array(alertDelivery),
});
export const alertEventsQueryReq = z.object({
  project_id: projectId,
  alert_ref: alertRef.optional(),
  state: z.enum(['firing', 'resolved']).optional(),
  since: timestamp.optional(),
  limit: z.number().int().min(1).max(10_000).default(100),
});
export const alertEventsQueryRes = z.object({ events: z.array(alertEvent) });

export const alertMuteReq = z.object({
  project_id: projectId,
  alert_ref: alertRef,
  until: timestamp.describe('transitions before this time are recorded but not delivered'),
});
export const alertUnmuteReq = z.object({ project_id: projectId, alert_ref: alertRef });
export const alertMuteRes = z.object({ alert: z.string(), muted_until: z.string().nullable() });

export const alertsListReq = z.object({ project_id: projectId });
export const alertSummary = z.object({
  alert: z.string(),
  alert_ref: z.string(),
  description: z.string().nullable(),
  metric_path: z.string(),
  aggregation: z.string(),
  comparison_operator: z.string(),
  threshold: z.number(),
  window_size: z.number().nullable(),
  window_duration: z.number().nullable(),
  op_scope: z.array(z.string()).nullable(),
  monitor_ref: z.string().nullable(),
  scorer_ref: z.string().nullable(),
  status_match_value: z.string().nullable().describe('as stored in the spec (for percentage and count)'),
  /** Why weft cannot evaluate it (a metric it does not know…), else null. */
  invalid: z.string().nullable(),
  state: alertState,
  value: z.number().nullable(),
  recent: z.array(z.number()).describe('the last figures, oldest first (at most 60)'),
  calls: z.number().int(),
  evaluated_at: z.string().nullable(),
  muted_until: z.string().nullable(),
});
export const alertsListRes = z.object({ alerts: z.array(alertSummary) });

/** Alerts (docs/alerts.md): AlertSpec objects evaluated by the query role; where their notifications go. */
export const alertRouteSpecs = {
  alertsList: {
    path: '/alerts/list',
    summary: "A project's AlertSpecs as weft evaluates them: the rule read, its state, last value, mute",
    auth: 'basic',
    service: 'query',
    request: alertsListReq,
    response: alertsListRes,
    published: true,
  },
  alertChannelCreate: {
    path: '/alerts/channels/create',
    summary: 'Adds a notification channel to a project: a webhook (JSON body, HMAC-signed with a secret) or a Slack incoming webhook',
    auth: 'basic',
    service: 'query',
    request: alertChannelCreateReq,
    response: alertChannel,
    published: true,
  },
  alertChannelList: {
    path: '/alerts/channels/list',
    summary: "A project's notification channels (never their secrets)",
    auth: 'basic',
    service: 'query',
    request: alertChannelListReq,
    response: alertChannelListRes,
    published: true,
  },
  alertChannelDelete: {
    path: '/alerts/channels/delete',
    summary: 'Removes a notification channel (its pending deliveries are dropped)',
    auth: 'basic',
    service: 'query',
    request: alertChannelRefReq,
    response: alertChannelDeleteRes,
    published: true,
  },
  alertChannelTest: {
    path: '/alerts/channels/test',
    summary: 'Sends a test notification to a channel now and says what the receiver answered',
    auth: 'basic',
    service: 'query',
    request: alertChannelRefReq,
    response: alertChannelTestRes,
    published: true,
  },
  alertEventsQuery: {
    path: '/alerts/events/query',
    summary: "A project's alert transitions (firing, resolved), newest first, each with its deliveries",
    auth: 'basic',
    service: 'query',
    request: alertEventsQueryReq,
    response: alertEventsQueryRes,
    published: true,
  },
  alertMute: {
    path: '/alerts/mute',
    summary: 'Mutes an alert until a time: its transitions are recorded, not delivered',
    auth: 'basic',
    service: 'query',
    request: alertMuteReq,
    response: alertMuteRes,
    published: true,
  },
  alertUnmute: {
    path: '/alerts/unmute',
    summary: "Ends an alert's mute",
    auth: 'basic',
    service: 'query',
    request: alertUnmuteReq,
    response: alertMuteRes,
    published: true,
  },
} as const satisfies Record<string, RouteSpec>;
