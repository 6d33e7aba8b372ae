import { z } from 'zod';
import { projectId } from './common';
import type { RouteSpec } from './spec';

/**
 * Weave's project settings endpoints (the 0.54 SDK's vendored server client: /project/ttl_settings/*,
 * /project/ingest_sampling_settings/read, GET /project/sensitive_data_settings) and weft's updates
 * of the last two.
 */
export const projectSettingsReadReq = z.object({ project_id: projectId });

export const ttlSettingsUpdateReq = z.object({
  project_id: projectId,
  retention_days: z
    .number()
    .int()
    .min(1, 'must be null (keep forever) or at least 1')
    .nullable()
    .describe('days calls and their feedback are kept; null: forever'),
  wb_user_id: z.string().nullish(),
});
export const ttlSettingsRes = z.object({
  retention_days: z.number().int().nullable().describe("null: no expiry (the project's, else the server default WEFT_RETENTION_DAYS)"),
});

export const ingestSamplingSettingsRes = z.object({
  dry_run: z.boolean().describe('true: traces are decided and counted (would_sample_out), but every call is stored'),
  sample_rate: z.number().describe('the share of new traces stored, 0–1, decided per trace id (1: all)'),
});
export const ingestSamplingSettingsUpdateReq = z.object({
  project_id: projectId,
  sample_rate: z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').describe('the share of new traces stored'),
  dry_run: z.boolean().default(false),
});

export const sensitiveDataPolicy = z
  .enum(['off', 'pii-v1'])
  .describe('pii-v1: e-mail addresses, phone numbers, card numbers, SSNs, IBANs and IP addresses in new calls are redacted');
export const sensitiveDataSettingsRes = z.object({ policy: sensitiveDataPolicy });
export const sensitiveDataSettingsUpdateReq = z.object({ project_id: projectId, policy: sensitiveDataPolicy });

/** A project's settings: retention (the query role keeps it) and ingest policies (docs/operations.md "Redaction and sampling": the gateway applies them, so it keeps them). */
export const projectSettingRouteSpecs = {
  ttlSettingsRead: {
    path: '/project/ttl_settings/read',
    summary: "A project's retention: days its calls and their feedback are kept (null: forever)",
    auth: 'basic',
    service: 'query',
    request: projectSettingsReadReq,
    response: ttlSettingsRes,
    published: true,
  },
  ttlSettingsUpdate: {
    path: '/project/ttl_settings/update',
    summary: "Sets a project's retention (null: keep forever); what is older leaves the store within an interval",
    auth: 'basic',
    service: 'query',
    request: ttlSettingsUpdateReq,
    response: ttlSettingsRes,
    published: true,
  },
  ingestSamplingSettingsRead: {
    path: '/project/ingest_sampling_settings/read',
    summary: "A project's ingest sampling: the share of new traces stored (decided per trace id), and whether it is a dry run",
    auth: 'basic',
    service: 'gateway',
    request: projectSettingsReadReq,
    response: ingestSamplingSettingsRes,
    published: true,
  },
  ingestSamplingSettingsUpdate: {
    path: '/project/ingest_sampling_settings/update',
    summary: "Sets a project's ingest sampling rate for new traces (1: keep all), or a dry run that only counts",
    auth: 'basic',
    service: 'gateway',
    request: ingestSamplingSettingsUpdateReq,
    response: ingestSamplingSettingsRes,
    published: true,
  },
  sensitiveDataSettingsRead: {
    path: '/project/sensitive_data_settings',
    method: 'GET',
    urlMembers: true,
    summary: "A project's sensitive-data policy: off, or pii-v1 (new calls' sensitive values redacted on the server)",
    auth: 'basic',
    service: 'gateway',
    request: projectSettingsReadReq,
    response: sensitiveDataSettingsRes,
    published: true,
  },
  sensitiveDataSettingsUpdate: {
    path: '/project/sensitive_data_settings/update',
    summary: "Sets a project's sensitive-data policy (pii-v1: redact e-mail addresses, phone and card numbers… in new calls; off)",
    auth: 'basic',
    service: 'gateway',
    request: sensitiveDataSettingsUpdateReq,
    response: sensitiveDataSettingsRes,
    published: true,
  },
} as const satisfies Record<string, RouteSpec>;
