import { isApiError } from '@weft/core';
import { parseRef, readObject } from '@weft/objects';
import type { Store } from '@weft/store';
import type { CustomProviderPolicy, Upstream } from './upstreams';

/*
 * Custom providers, as the reference serves them: a project stores a `Provider` (base URL, the
 * name of its API key, extra headers) and `ProviderModel`s naming it, and a completion for
 * `custom::<provider>::<model>` goes to that provider's OpenAI-compatible API. What the reference
 * takes from its secret store, weft takes from the environment, and only for the key names the
 * operator lists; a provider's base URL must be one the operator allows (a project's object
 * never makes the server call an arbitrary host or read an arbitrary variable: the
 * CustomProviderPolicy the upstreams file states, upstreams.ts).
 */

export const CUSTOM_PREFIX = 'custom::';

/** What a custom model resolves to: a one-off upstream, the model name it is asked for, the usage key. */
export interface CustomProviderTarget {
  upstream: Upstream;
  upstreamModel: string;
  usageKey: string;
  headers: Record<string, string>;
}

/** A setup failure, answered in the response (`{"error": ...}`) as the reference does. */
export class CustomProviderError extends Error {}

/** The reference's `_sanitize_name_for_object_id`: what the provider setup stored the objects under. */
export function sanitizeForObjectId(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** `custom::<provider>::<model>` (or `custom::<provider>-<model>`, an object id) → names to look up. */
export function parseCustomModel(model: string): { provider: string; modelObjectId: string; explicit: boolean } {
  const rest = model.slice(CUSTOM_PREFIX.length);
  const sep = rest.indexOf('::');
  if (sep >= 0) {
    const provider = sanitizeForObjectId(rest.slice(0, sep));
    return { provider, modelObjectId: `${provider}-${sanitizeForObjectId(rest.slice(sep + 2))}`, explicit: true };
  }
  return { provider: rest.split('-', 1)[0]!, modelObjectId: rest, explicit: false };
}

export async function resolveCustomProvider(
  store: Store,
  projectId: string,
  model: string,
  policy: CustomProviderPolicy | null,
  timeoutMs: number,
): Promise<CustomProviderTarget> {
  if (!policy)
    throw new CustomProviderError(
      `Model ${model}: custom providers are not enabled on this server (custom_providers in WEFT_UPSTREAMS_FILE)`,
    );
  const { provider, modelObjectId, explicit } = parseCustomModel(model);
  let providerModel: Record<string, unknown>;
  let providerObj: Record<string, unknown>;
  try {
    const pm = await readObject(store, { project_id: projectId, object_id: modelObjectId, digest: 'latest' });
    if (pm.base_object_class !== 'ProviderModel') throw new Error(`Could not find ProviderModel with object_id ${modelObjectId}`);
    providerModel = valOf(pm.val);
    const p = await readObject(store, { project_id: projectId, ...providerLocation(projectId, provider, providerModel.provider) });
    if (p.base_object_class !== 'Provider') throw new Error(`Could not find Provider for model object_id ${provider}`);
    providerObj = valOf(p.val);
  } catch (e) {
    const message = isApiError(e) ? e.reason : (e as Error).message;
    throw new CustomProviderError(`Failed to fetch provider model information: ${message}`);
  }
  const actualModel = typeof providerModel.name === 'string' && providerModel.name ? providerModel.name : modelObjectId;
  const baseUrl = String(providerObj.base_url ?? '').replace(/\/+$/, '');
  if (!baseUrlAllowed(baseUrl, policy.baseUrls)) {
    throw new CustomProviderError(`Provider ${provider}: base URL ${baseUrl} is not one this server may call (custom_providers.base_urls)`);
  }
  const keyName = typeof providerObj.api_key_name === 'string' ? providerObj.api_key_name : '';
  if (!keyName) throw new CustomProviderError(`No secret name found for provider ${provider}`);
  const apiKey = policy.apiKeys.get(keyName);
  if (!apiKey) throw new CustomProviderError(`No API key ${keyName} found for provider ${provider}`);
  // Ollama serves the OpenAI API under /v1 (the reference calls it through litellm's ollama route).
  const ollama = provider.toLowerCase().includes('ollama');
  const apiBase = ollama && !baseUrl.endsWith('/v1') ? `${baseUrl}/v1` : baseUrl;
  const headers: Record<string, string> = {};
  const extra = providerObj.extra_headers;
  if (extra && typeof extra === 'object') for (const [k, v] of Object.entries(extra)) if (typeof v === 'string') headers[k] = v;
  return {
    upstream: {
      name: `custom provider ${provider}`,
      baseUrl: apiBase,
      chatUrl: `${apiBase}/chat/completions`,
      dialect: ollama ? 'ollama' : 'openai',
      priorityScheduling: false,
      timeoutMs,
      apiKeyEnv: keyName,
      apiKey,
    },
    upstreamModel: actualModel,
    usageKey: explicit ? `${model.slice(CUSTOM_PREFIX.length).split('::', 1)[0]}/${actualModel}` : actualModel,
    headers,
  };
}

/** Where a ProviderModel's `provider` points: a ref, a digest of the provider, or its name (latest). */
function providerLocation(projectId: string, provider: string, pointer: unknown): { object_id: string; digest: string } {
  if (typeof pointer === 'string' && pointer.startsWith('weave:///')) {
    const ref = parseRef(pointer);
    // Only the project's own providers: a ref elsewhere is not followed.
    if (!ref || ref.kind !== 'object' || ref.projectId !== projectId)
      throw new Error(`provider ${pointer} is not an object of this project`);
    return { object_id: ref.name, digest: ref.version };
  }
  if (typeof pointer !== 'string' || pointer === '' || pointer === provider) return { object_id: provider, digest: 'latest' };
  return { object_id: provider, digest: pointer };
}

function baseUrlAllowed(baseUrl: string, allowed: string[]): boolean {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return false;
  }
  return allowed.some((a) => {
    const base = new URL(a);
    const path = base.pathname.replace(/\/+$/, '');
    return url.origin === base.origin && (url.pathname === path || url.pathname.startsWith(`${path}/`) || path === '');
  });
}

function valOf(val: unknown): Record<string, unknown> {
  const text = typeof val === 'object' && val !== null && 'text' in val ? (val as { text: string }).text : null;
  const v = text !== null ? (JSON.parse(text) as unknown) : val;
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('the stored value is not an object');
  return v as Record<string, unknown>;
}
