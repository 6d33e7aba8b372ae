import type { Logger } from '@weft/core';
import { modelNotFound } from './openai-errors';
import { getJson } from './upstream-client';
import type { Upstream, UpstreamRegistry } from './upstreams';

type Json = Record<string, unknown>;

/** How long an upstream's own model list is reused, and how long asking for it may take. */
const UPSTREAM_CARDS_TTL_MS = 30_000;
const UPSTREAM_CARDS_TIMEOUT_MS = 5_000;

/**
 * `GET /v1/models[/{id}]` in vLLM's (OpenAI's) shape: the models of the upstreams file, in its
 * order. What an upstream reports about a model in its own `/models` (`created`, `owned_by`,
 * `root`, `parent`, `max_model_len`) is passed on; an upstream that does not answer still has
 * its models listed, from the file (`owned_by` = the upstream's name, `root` = the id).
 */
export class ModelList {
  private readonly started = Math.floor(Date.now() / 1000);
  private readonly cards = new Map<string, { at: number; byId: Promise<Map<string, Json>> }>();

  constructor(
    private readonly upstreams: UpstreamRegistry,
    private readonly log: Logger,
  ) {}

  async list(): Promise<Json> {
    const data = await Promise.all(this.upstreams.entries().map(({ model, upstream }) => this.card(model, upstream)));
    return { object: 'list', data };
  }

  async retrieve(id: string): Promise<Json> {
    const upstream = this.upstreams.find(id);
    if (!upstream) throw modelNotFound(id);
    return this.card(id, upstream);
  }

  private async card(model: string, upstream: Upstream): Promise<Json> {
    const reported = (await this.upstreamCards(upstream)).get(model) ?? {};
    const card: Json = {
      id: model,
      object: 'model',
      created: typeof reported.created === 'number' ? reported.created : this.started,
      owned_by: typeof reported.owned_by === 'string' ? reported.owned_by : upstream.name,
      root: typeof reported.root === 'string' ? reported.root : model,
      parent: typeof reported.parent === 'string' ? reported.parent : null,
    };
    if (typeof reported.max_model_len === 'number') card.max_model_len = reported.max_model_len;
    return card;
  }

  /** The upstream's own model cards by id (empty when it does not answer), cached briefly. */
  private upstreamCards(upstream: Upstream): Promise<Map<string, Json>> {
    const cached = this.cards.get(upstream.name);
    if (cached && Date.now() - cached.at < UPSTREAM_CARDS_TTL_MS) return cached.byId;
    const byId = getJson(upstream, '/models', { timeoutMs: Math.min(upstream.timeoutMs, UPSTREAM_CARDS_TIMEOUT_MS) }).then(
      (doc) => {
        const out = new Map<string, Json>();
        const data = (doc as Json | null)?.data;
        for (const c of Array.isArray(data) ? data : []) {
          if (c && typeof c === 'object' && typeof (c as Json).id === 'string') out.set((c as Json).id as string, c as Json);
        }
        return out;
      },
      (e: Error) => {
        this.log.warn(
          { upstream: upstream.name, error: e.message },
          'upstream model list unavailable; listing its models from the upstreams file',
        );
        return new Map<string, Json>();
      },
    );
    this.cards.set(upstream.name, { at: Date.now(), byId });
    return byId;
  }
}
