import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '@weft/core';

/** The wire dialects of OpenAI-compatible model servers this gateway knows how to speak to. */
export const DIALECTS = ['vllm', 'sglang', 'llamacpp', 'ollama', 'openai'] as const;
export type Dialect = (typeof DIALECTS)[number];

const upstreamEntry = z.object({
  name: z.string().min(1),
  /** Up to and including `/v1`; `/chat/completions`, `/completions`, `/embeddings`, `/models` are appended. */
  base_url: z.url(),
  /** Name of the environment variable holding the upstream's API key; absent = no key sent. */
  api_key_env: z.string().min(1).nullish(),
  models: z.array(z.string().min(1)).min(1),
  /** Whether the server runs with priority scheduling (vLLM `--scheduling-policy priority`). */
  priority_scheduling: z.boolean().default(false),
  dialect: z.enum(DIALECTS).default('vllm'),
  /** Time allowed for the answer (non-streaming), or for the first byte and between chunks (streaming). */
  timeout_ms: z.number().int().positive().optional(),
});
/**
 * Custom providers (`custom::<provider>::<model>`, Provider objects of a project): off unless
 * listed. A provider's base URL must be one of `base_urls` (or under one); its `api_key_name`
 * one of `api_keys`, each the name of the environment variable holding the key.
 */
const customProvidersEntry = z.object({
  base_urls: z.array(z.url()).min(1),
  api_keys: z.array(z.string().min(1)).default([]),
});
const upstreamsFile = z.object({ upstreams: z.array(upstreamEntry).default([]), custom_providers: customProvidersEntry.optional() });

export interface Upstream {
  name: string;
  /** The base URL up to and including `/v1`, without a trailing slash. */
  baseUrl: string;
  chatUrl: string;
  dialect: Dialect;
  priorityScheduling: boolean;
  timeoutMs: number;
  apiKeyEnv: string | null;
  /** Read once at start; undefined when api_key_env names an unset variable. */
  apiKey: string | undefined;
}

/**
 * What projects' custom providers may use (custom-providers.ts), as `custom_providers` of the
 * upstreams file says: a project's object never makes the server call an arbitrary host or read
 * an arbitrary variable.
 */
export interface CustomProviderPolicy {
  /** Allowed base URLs: a provider's base URL must be one of these or lie under one. */
  baseUrls: string[];
  /** Key names a Provider's `api_key_name` may name, each read from the variable of that name. */
  apiKeys: Map<string, string | undefined>;
}

/** Model name → upstream, from WEFT_UPSTREAMS_FILE. */
export class UpstreamRegistry {
  private readonly byModel = new Map<string, Upstream>();
  /** Served model names in file order; the first is used when a request names none (as vLLM does). */
  readonly models: string[] = [];
  /** What projects' custom providers may use; null: custom providers are off. */
  readonly customProviders: CustomProviderPolicy | null;

  constructor(
    entries: z.infer<typeof upstreamsFile>['upstreams'],
    env: Record<string, string | undefined>,
    readonly defaultTimeoutMs: number,
    custom?: z.infer<typeof customProvidersEntry>,
  ) {
    this.customProviders = custom
      ? { baseUrls: custom.base_urls, apiKeys: new Map(custom.api_keys.map((k) => [k, env[k] || undefined])) }
      : null;
    const names = new Set<string>();
    for (const e of entries) {
      if (names.has(e.name)) throw new ConfigError(`WEFT_UPSTREAMS_FILE: upstream name '${e.name}' appears twice`);
      names.add(e.name);
      const baseUrl = e.base_url.replace(/\/+$/, '');
      const upstream: Upstream = {
        name: e.name,
        baseUrl,
        chatUrl: `${baseUrl}/chat/completions`,
        dialect: e.dialect,
        priorityScheduling: e.priority_scheduling,
        timeoutMs: e.timeout_ms ?? defaultTimeoutMs,
        apiKeyEnv: e.api_key_env ?? null,
        apiKey: e.api_key_env ? env[e.api_key_env] || undefined : undefined,
      };
      for (const m of e.models) {
        const other = this.byModel.get(m);
        if (other) throw new ConfigError(`WEFT_UPSTREAMS_FILE: model '${m}' is listed by both '${other.name}' and '${e.name}'`);
        this.byModel.set(m, upstream);
        this.models.push(m);
      }
    }
  }

  find(model: string): Upstream | undefined {
    return this.byModel.get(model);
  }

  /** The served models in file order, each with its upstream. */
  entries(): { model: string; upstream: Upstream }[] {
    return this.models.map((model) => ({ model, upstream: this.byModel.get(model)! }));
  }

  /** Upstreams whose api_key_env names an unset variable (logged at start, refused per request). */
  missingKeys(): { upstream: string; env: string }[] {
    const seen = new Map<string, Upstream>();
    for (const u of this.byModel.values()) seen.set(u.name, u);
    return [...seen.values()].filter((u) => u.apiKeyEnv && !u.apiKey).map((u) => ({ upstream: u.name, env: u.apiKeyEnv! }));
  }
}

/** Reads and validates the upstreams file once at start; a bad file stops the service with a clear message. */
export function loadUpstreams(
  file: string | undefined,
  opts: { defaultTimeoutMs: number; env?: Record<string, string | undefined> },
): UpstreamRegistry {
  const env = opts.env ?? process.env;
  if (!file) return new UpstreamRegistry([], env, opts.defaultTimeoutMs);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`WEFT_UPSTREAMS_FILE: cannot read ${file}: ${(e as Error).message}`);
  }
  const parsed = upstreamsFile.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`WEFT_UPSTREAMS_FILE ${file} is invalid:\n  ${lines.join('\n  ')}`);
  }
  return new UpstreamRegistry(parsed.data.upstreams, env, opts.defaultTimeoutMs, parsed.data.custom_providers);
}
