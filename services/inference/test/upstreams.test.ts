import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@weft/core';
import { loadUpstreams } from '../src/upstreams';

const dir = mkdtempSync(join(tmpdir(), 'weft-upstreams-'));
const file = (name: string, content: unknown) => {
  const p = join(dir, name);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
};
const entry = { name: 'local', base_url: 'http://127.0.0.1:8000/v1/', api_key_env: 'LOCAL_KEY', models: ['m1', 'm2'] };

describe('loadUpstreams', () => {
  it('maps models to upstreams with defaults, reading the key from the named variable once', () => {
    const reg = loadUpstreams(
      file('ok.json', { upstreams: [entry, { name: 'o', base_url: 'http://h/v1', models: ['m3'], dialect: 'ollama', timeout_ms: 5 }] }),
      {
        defaultTimeoutMs: 1000,
        env: { LOCAL_KEY: 'k1' },
      },
    );
    expect(reg.models).toEqual(['m1', 'm2', 'm3']);
    expect(reg.find('m2')).toMatchObject({
      name: 'local',
      chatUrl: 'http://127.0.0.1:8000/v1/chat/completions',
      dialect: 'vllm',
      priorityScheduling: false,
      timeoutMs: 1000,
      apiKey: 'k1',
    });
    expect(reg.find('m3')).toMatchObject({ dialect: 'ollama', timeoutMs: 5, apiKey: undefined, apiKeyEnv: null });
    expect(reg.find('nope')).toBeUndefined();
    expect(reg.missingKeys()).toEqual([]);
    expect(loadUpstreams(file('nokey.json', { upstreams: [entry] }), { defaultTimeoutMs: 1, env: {} }).missingKeys()).toEqual([
      { upstream: 'local', env: 'LOCAL_KEY' },
    ]);
  });

  it('serves nothing without a file', () => {
    expect(loadUpstreams(undefined, { defaultTimeoutMs: 1, env: {} }).models).toEqual([]);
  });

  it('refuses a bad file with a message naming the problem', () => {
    const bad = (content: unknown) => () => loadUpstreams(file(`bad-${Math.random()}.json`, content), { defaultTimeoutMs: 1, env: {} });
    expect(bad('{not json')).toThrow(ConfigError);
    expect(bad({ upstreams: [{ ...entry, dialect: 'tgi' }] })).toThrow(/upstreams\.0\.dialect/);
    expect(bad({ upstreams: [{ ...entry, base_url: 'not a url' }] })).toThrow(/upstreams\.0\.base_url/);
    expect(bad({ upstreams: [entry, { ...entry, name: 'other' }] })).toThrow(/model 'm1' is listed by both 'local' and 'other'/);
    expect(bad({ upstreams: [entry, { ...entry, models: ['x'] }] })).toThrow(/upstream name 'local' appears twice/);
    expect(() => loadUpstreams(join(dir, 'missing.json'), { defaultTimeoutMs: 1, env: {} })).toThrow(/cannot read/);
  });
});
