import { z } from 'zod';
import { projectId } from './common';

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
