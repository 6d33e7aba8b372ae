import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runRead, toCsv } from '../src/read';

describe('weft analytics --format csv', () => {
  it('writes figures without float noise (issue 53, item 9)', () => {
    expect(toCsv([{ model: 'gpt-4o', cost: 0.002249999999999985, latency: 178.1199999999999, calls: 3 }])).toBe(
      'model,cost,latency,calls\r\ngpt-4o,0.00225,178.12,3\r\n',
    );
  });
});

describe('weft export progress', () => {
  const serve = () =>
    new Promise<Server>((resolve) => {
      const server = createServer((req, res) => {
        if (req.url === '/calls/query_stats') return res.end(JSON.stringify({ count: 3 }));
        res.write('{"id":"a"}\n{"id":"b"}\n');
        setTimeout(() => res.end('{"id":"c"}\n'), 20);
      });
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
  const run = async (isTTY: boolean) => {
    const server = await serve();
    let err = '';
    const progress = { isTTY, write: (s: string) => ((err += s), true) } as unknown as NodeJS.WriteStream;
    const out = join(mkdtempSync(join(tmpdir(), 'weft-cli-')), 'calls.jsonl');
    const { port } = server.address() as AddressInfo;
    try {
      await runRead(
        { kind: 'export', path: '/calls/export', body: { project_id: 'e/p', format: 'jsonl' }, url: `http://127.0.0.1:${port}`, out },
        progress,
      );
    } finally {
      server.close();
    }
    return err;
  };

  it('writes whole lines when stderr is not a terminal (issue 53, item 10), rewrites one line on a terminal', async () => {
    const piped = await run(false);
    expect(piped).not.toContain('\r');
    expect(piped.trimEnd().split('\n').at(-1)).toBe('exporting e/p: 3 / 3 calls');
    expect(await run(true)).toMatch(/^\rexporting e\/p: .*\rexporting e\/p: 3 \/ 3 calls\n$/s);
  });
});
