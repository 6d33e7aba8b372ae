import type { z } from 'zod';
import type { ttlSettingsRes, ttlSettingsUpdateReq } from '@weft/api';
import { readProjectSetting, writeProjectSetting } from '@weft/objects';
import type { Store } from '@weft/store';

type TtlSettings = z.infer<typeof ttlSettingsRes>;

/** A project's retention: its own setting (null = forever), else the server's default (WEFT_RETENTION_DAYS). */
export async function readTtlSettings(store: Store, projectId: string, defaultDays: number | undefined): Promise<TtlSettings> {
  const own = await readProjectSetting(store, projectId, 'retention_days');
  if (own === undefined) return { retention_days: defaultDays ?? null };
  return { retention_days: typeof own === 'number' ? own : null };
}

/** Sets it; the writer's retention pass removes what is older at its next interval. */
export async function updateTtlSettings(store: Store, req: z.infer<typeof ttlSettingsUpdateReq>, userId: string): Promise<TtlSettings> {
  await writeProjectSetting(store, req.project_id, 'retention_days', req.retention_days, userId);
  return { retention_days: req.retention_days };
}
