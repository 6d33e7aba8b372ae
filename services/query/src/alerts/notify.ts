import { createHmac } from 'node:crypto';
import type { ChannelRow } from '@weft/objects';

/** The JSON notification of a transition (docs/alerts.md, "The webhook body"). */
export interface AlertNotification {
  /** The event's id: the same on every retry, so a receiver can drop a repeat. */
  id: string;
  state: 'firing' | 'resolved' | 'test';
  alert: string;
  alert_ref: string;
  project_id: string;
  value: number | null;
  threshold: number;
  comparison_operator: string;
  aggregation: string;
  metric_path: string;
  window: { size: number | null; duration_seconds: number | null; calls: number };
  /** The UI's page of the calls the alert watches (a path on the weft server). */
  calls_link: string;
  time: string;
  description: string | null;
}

/** Each receiver gets an answer within this, or the attempt failed. */
const SEND_TIMEOUT_MS = 10_000;
export const SIGNATURE_HEADER = 'x-weft-signature';
export const EVENT_HEADER = 'x-weft-event-id';

export interface SendResult {
  ok: boolean;
  status_code: number | null;
  error: string | null;
}

/** The body a channel receives: weft's JSON, or Slack's incoming-webhook `{text}`. */
export function channelBody(channel: Pick<ChannelRow, 'format'>, n: AlertNotification): string {
  if (channel.format === 'json') return JSON.stringify(n);
  const icon = n.state === 'firing' ? ':rotating_light:' : n.state === 'resolved' ? ':white_check_mark:' : ':bell:';
  const op = { GREATER_THAN: '>', LESS_THAN: '<', EQUAL: '=' }[n.comparison_operator] ?? n.comparison_operator;
  const window = n.window.size !== null ? `last ${n.window.size} calls` : '';
  const duration = n.window.duration_seconds !== null ? `last ${n.window.duration_seconds} s` : '';
  const text =
    `${icon} *${n.alert}* is *${n.state}* in ${n.project_id}: ${n.aggregation}(${n.metric_path || 'calls'}) = ${n.value ?? '–'} ` +
    `(threshold ${op} ${n.threshold}; ${[window, duration].filter(Boolean).join(', ')}, ${n.window.calls} calls)`;
  return JSON.stringify({ text });
}

/** `sha256=<hex HMAC-SHA256 of the body>` with the channel's secret. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** One POST to a channel; never throws (a failure is its result). */
export async function send(channel: Pick<ChannelRow, 'url' | 'format' | 'secret'>, eventId: string, body: string): Promise<SendResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'weft-alerts', [EVENT_HEADER]: eventId };
  if (channel.secret) headers[SIGNATURE_HEADER] = signature(channel.secret, body);
  try {
    const res = await fetch(channel.url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      redirect: 'manual',
    });
    // The answer's body is not kept; reading it frees the connection.
    await res.arrayBuffer().catch(() => undefined);
    return res.ok
      ? { ok: true, status_code: res.status, error: null }
      : { ok: false, status_code: res.status, error: `the receiver answered ${res.status}` };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { ok: false, status_code: null, error: e.cause?.code ?? e.cause?.message ?? e.message };
  }
}

/**
 * When a failed delivery is tried again: 1 s after the first failure, doubling, at most `capMs`
 * apart (a receiver back up gets what it missed within `capMs`).
 */
export function retryDelayMs(attempts: number, capMs: number): number {
  return Math.min(capMs, 1000 * 2 ** Math.max(0, attempts - 1));
}
