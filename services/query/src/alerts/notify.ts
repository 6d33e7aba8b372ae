import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { ChannelRow } from '@weft/objects';
import { guardedLookup, hostOf, refusedAddress, RefusedAddressError, type UrlPolicy } from './url-guard';

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

/**
 * One POST to a channel; never throws (a failure is its result). The connection is made only to
 * an address `policy` allows (url-guard.ts): a literal IP is checked first, a host name's
 * addresses as the connection resolves them (`refused`: the policy refused it, no connection made).
 * Redirects are not followed.
 */
export async function send(
  channel: Pick<ChannelRow, 'url' | 'format' | 'secret'>,
  eventId: string,
  body: string,
  policy: UrlPolicy,
): Promise<SendResult & { refused?: boolean }> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'weft-alerts',
    [EVENT_HEADER]: eventId,
    'content-length': String(Buffer.byteLength(body)),
  };
  if (channel.secret) headers[SIGNATURE_HEADER] = signature(channel.secret, body);
  let url: URL;
  try {
    url = new URL(channel.url);
  } catch {
    return { ok: false, status_code: null, error: 'the channel URL is not a URL', refused: true };
  }
  const host = hostOf(url);
  if (isIP(host)) {
    const why = refusedAddress(policy, host, host);
    if (why) return { ok: false, status_code: null, error: why, refused: true };
  }
  return new Promise((resolve) => {
    let settled = false;
    const settle = (r: SendResult & { refused?: boolean }) => {
      if (!settled) resolve(r);
      settled = true;
    };
    const failed = (err: NodeJS.ErrnoException) =>
      settle(
        err instanceof RefusedAddressError
          ? { ok: false, status_code: null, error: err.message, refused: true }
          : { ok: false, status_code: null, error: err.name === 'AbortError' ? 'no answer within 10 s' : (err.code ?? err.message) },
      );
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      { method: 'POST', headers, lookup: guardedLookup(policy), signal: AbortSignal.timeout(SEND_TIMEOUT_MS) },
      (res) => {
        const status = res.statusCode ?? 0;
        const answer: SendResult =
          status >= 200 && status < 300
            ? { ok: true, status_code: status, error: null }
            : { ok: false, status_code: status, error: `the receiver answered ${status}` };
        // The answer's body is not kept; reading it frees the connection. The status is the answer,
        // whether or not its body arrives whole.
        res.resume();
        res.on('error', () => settle(answer));
        res.on('close', () => settle(answer));
        res.on('end', () => settle(answer));
      },
    );
    req.on('error', failed);
    req.end(body);
  });
}

/**
 * When a failed delivery is tried again: 1 s after the first failure, doubling, at most `capMs`
 * apart (a receiver back up gets what it missed within `capMs`).
 */
export function retryDelayMs(attempts: number, capMs: number): number {
  return Math.min(capMs, 1000 * 2 ** Math.max(0, attempts - 1));
}
