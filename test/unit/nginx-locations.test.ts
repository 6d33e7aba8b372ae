import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BEGIN_MARKER, END_MARKER, familyFor, nginxLocations, routeTablePaths, withLocations } from '../../scripts/nginx-locations';

// The generator of the front proxy's locations (scripts/nginx-locations.ts); test/routes.test.ts
// checks the committed nginx.conf against it with the real composition's routes.
const route = (method: string, url: string, role: string) => ({ method, url, role });
const exactOf = (lines: string[]) => lines.flatMap((l) => /location = (\S+) \{ proxy_pass http:\/\/(\w+); \}/.exec(l)?.slice(1, 3) ?? []);

describe('nginx locations from the route table', () => {
  it('gives each route of the JSON table an exact location, even under a family of its service', () => {
    const lines = nginxLocations(
      [route('POST', '/annotation_queues/query', 'query'), route('POST', '/calls/stream_query', 'query')],
      new Set(['/annotation_queues/query', '/calls/stream_query']),
    );
    expect(exactOf(lines)).toEqual(['/annotation_queues/query', 'query', '/calls/stream_query', 'query']);
  });

  it('leaves other routes to their family, and gives one an exact location where the family sends elsewhere', () => {
    const lines = nginxLocations(
      [route('POST', '/admin/keys/create', 'gateway'), route('GET', '/v1/models', 'inference'), route('POST', '/v1/traces', 'gateway')],
      new Set(),
    );
    expect(exactOf(lines)).toEqual(['/v1/traces', 'gateway']);
    expect(lines).toContain('    location /admin/ { proxy_pass http://gateway; }');
  });

  it('refuses a route with parameters that no family sends to its service, and a path two services register', () => {
    expect(() => nginxLocations([route('GET', '/things/:id', 'query')], new Set())).toThrow(/\/things\/:id \(query\): no location/);
    expect(() => nginxLocations([route('POST', '/v2/:entity/:project/call/start', 'query')], new Set())).toThrow(
      /no location sends it to query/,
    );
    expect(() => nginxLocations([route('POST', '/x', 'query'), route('GET', '/x', 'gateway')], new Set())).toThrow(/one path, one service/);
  });

  it('picks a family as nginx does: the first regex that matches, else the longest prefix', () => {
    expect(familyFor('/v2/e/weave/call/start')?.service).toBe('gateway');
    expect(familyFor('/e/p/weave/x')?.service).toBe('query');
    expect(familyFor('/v1/models/x')?.location).toBe('/v1/');
    expect(familyFor('/calls/stream_query')).toBeUndefined();
  });

  it('takes the table paths with their aliases', () => {
    const paths = routeTablePaths();
    for (const p of ['/v1/chat/completions/', '/v1/chat/completions', '/file/content', '/files/content', '/call/upsert_batch'])
      expect(paths, p).toContain(p);
  });

  it('rewrites only what lies between the markers, and refuses a file without them', () => {
    const conf = ['a', `  ${BEGIN_MARKER}`, '  old', `  ${END_MARKER}`, 'b'].join('\n');
    expect(withLocations(conf, ['  new'])).toBe('a\n  new\nb');
    expect(() => withLocations('a\nb', ['x'])).toThrow(/needs the lines/);
  });
});

const ROOT = join(__dirname, '..', '..');

describe("the Helm chart's nginx.conf (issue 53, item 6)", () => {
  it('is a regular file (helm warns about a symbolic link on every run) equal to deploy/nginx/nginx.conf', () => {
    const copy = join(ROOT, 'deploy', 'helm', 'weft', 'files', 'nginx.conf');
    expect(lstatSync(copy).isSymbolicLink()).toBe(false);
    expect(readFileSync(copy, 'utf8')).toBe(readFileSync(join(ROOT, 'deploy', 'nginx', 'nginx.conf'), 'utf8'));
  });
});
