import { inLane, RetryableError, type Logger } from '@weft/core';
import { listProjectSettings } from '@weft/objects';
import type { Store } from '@weft/store';
import { PII_POLICIES, type PiiPolicy } from './redaction';
import type { SamplingSetting } from './sampling';

/** The project settings that change what ingestion stores (project_settings rows). */
export const PII_POLICY_SETTING = 'pii_policy';
export const INGEST_SAMPLING_SETTING = 'ingest_sampling';

/** What ingestion applies now: the projects that redact, and those that sample (every other project: neither). */
export interface IngestPolicies {
  redact: ReadonlySet<string>;
  sampling: ReadonlyMap<string, SamplingSetting>;
}

const NONE: IngestPolicies = { redact: new Set(), sampling: new Map() };

/** How often a process reads the settings again: a change made through another process applies within this. */
export const INGEST_SETTINGS_REFRESH_MS = 5_000;

/**
 * The ingest policies of every project, held in memory: read at start (before the first call is
 * taken, so no call of a redacting project is stored unredacted after a restart), again every
 * INGEST_SETTINGS_REFRESH_MS, and at once after a change made through this process. A failed
 * read keeps the last policies. Shared by the process's entrances (ingestSettingsFor).
 */
export class IngestSettings {
  private policies: IngestPolicies = NONE;
  private loaded: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly log?: Logger,
  ) {}

  /** Resolves once the policies were read once (the first call starts the reading and the refresh). */
  ready(): Promise<void> {
    if (!this.loaded) {
      // Not read: the next call tries again (ingestion answers 503 meanwhile: nothing is stored unredacted).
      this.loaded = this.read().catch((e: unknown) => {
        this.loaded = null;
        throw new RetryableError(`project ingest settings unreadable (${String(e)}); not stored`, 1);
      });
    }
    if (!this.timer) {
      // A periodic re-read is background work (the first read above is what ingestion waits for).
      this.timer = setInterval(() => void inLane('background', () => this.refresh()), INGEST_SETTINGS_REFRESH_MS);
      this.timer.unref();
    }
    return this.loaded;
  }

  /** Whether ready() resolved: the policies can be read synchronously. */
  get isReady(): boolean {
    return this.readOnce;
  }

  current(): IngestPolicies {
    return this.policies;
  }

  /** Reads them again now; a failure keeps the last ones (logged). */
  async refresh(): Promise<void> {
    try {
      await this.read();
    } catch (e) {
      this.log?.warn({ err: String(e) }, 'ingest settings not re-read; the last ones stay in force');
    }
  }

  private async read(): Promise<void> {
    const rows = await listProjectSettings(this.store, [PII_POLICY_SETTING, INGEST_SAMPLING_SETTING], 'ingest.settings');
    const redact = new Set<string>();
    const sampling = new Map<string, SamplingSetting>();
    for (const row of rows) {
      const value = row.value;
      if (row.name === PII_POLICY_SETTING && value === 'pii-v1') redact.add(row.project_id);
      // A project back at rate 1 without a dry run samples nothing: left out.
      if (row.name === INGEST_SAMPLING_SETTING && isSampling(value) && (value.sample_rate < 1 || value.dry_run))
        sampling.set(row.project_id, value);
    }
    this.policies = { redact, sampling };
    this.readOnce = true;
  }

  private readOnce = false;

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

function isSampling(v: unknown): v is SamplingSetting {
  const s = v as SamplingSetting | null;
  return typeof s === 'object' && s !== null && typeof s.sample_rate === 'number' && typeof s.dry_run === 'boolean';
}

export const isPiiPolicy = (v: unknown): v is PiiPolicy => (PII_POLICIES as readonly unknown[]).includes(v);

const shared = new WeakMap<Store, IngestSettings>();

/** The process's settings for a store: one reader shared by every entrance (and refreshed by the settings routes). */
export function ingestSettingsFor(store: Store, log?: Logger): IngestSettings {
  let s = shared.get(store);
  if (!s) shared.set(store, (s = new IngestSettings(store, log)));
  return s;
}
