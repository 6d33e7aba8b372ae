import { z } from 'zod';
import { projectId } from './common';

/** Weave's project settings endpoints (the 0.54 SDK's vendored server client: /project/ttl_settings/*, /project/ingest_sampling_settings/read). */
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
  dry_run: z.boolean(),
  sample_rate: z.number().describe('the share of calls stored: always 1 (weft samples nothing)'),
});
