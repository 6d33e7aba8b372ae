import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client, startWeft, type RunningWeft } from '@weft/harness';

/** The user the suite's own adapter writes as (its `externalize_trace_server` injects it). */
export const SUITE_USER = 'test_user';

/** What happened on one leased weft: the test it served and the log records it wrote at error level or above. */
export interface LeaseRecord {
  test: string;
  errors: string[];
}

interface Ready {
  id: string;
  weft: RunningWeft;
}

/**
 * A fresh all-in-one weft per test, each on its own copy of one migrated data directory (with
 * the suite user's key already in it), one kept warm ahead so a test rarely waits for a start.
 * The pytest plugin leases one over a loopback HTTP endpoint (POST /lease, /release).
 */
export class WeftPool {
  private template = '';
  private key = '';
  private next = 0;
  private warm: Promise<Ready> | null = null;
  private readonly leased = new Map<string, { ready: Ready; test: string }>();
  private server: Server | null = null;
  readonly records: LeaseRecord[] = [];

  constructor(private readonly scratch: string) {}

  /** Builds the template data directory and starts the lease endpoint; resolves to its URL. */
  async start(): Promise<string> {
    rmSync(this.scratch, { recursive: true, force: true });
    mkdirSync(this.scratch, { recursive: true });
    this.template = join(this.scratch, 'template');
    const weft = await startWeft({ dataDir: this.template });
    try {
      const created = await new Client(weft.url).post('/admin/keys/create', { user: SUITE_USER, admin: true, name: 'conformance' });
      if (created.status !== 200) throw new Error(`creating the suite's key: ${created.status} ${created.text}`);
      this.key = created.body.key;
    } finally {
      await weft.stop();
    }
    this.warm = this.startOne();
    this.server = createServer((req, res) => {
      void this.handle(req).then(
        (body) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        },
        (err: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(err));
        },
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Stops every weft and the endpoint. */
  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    const warm = await this.warm?.catch(() => null);
    if (warm) await this.dispose(warm);
    for (const { ready } of this.leased.values()) await this.dispose(ready);
    this.leased.clear();
  }

  private async handle(req: IncomingMessage): Promise<unknown> {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const body = JSON.parse(raw || '{}') as { test?: string; id?: string };
    if (req.url === '/lease') {
      const ready = await this.warm!;
      this.warm = this.startOne();
      this.leased.set(ready.id, { ready, test: body.test ?? '' });
      return { id: ready.id, url: ready.weft.url, key: this.key };
    }
    if (req.url === '/release') {
      const lease = this.leased.get(body.id ?? '');
      if (!lease) throw new Error(`no lease ${body.id}`);
      this.leased.delete(body.id!);
      this.records.push({ test: lease.test, errors: errorRecords(lease.ready.weft.logs) });
      await this.dispose(lease.ready);
      return {};
    }
    throw new Error(`unknown path ${req.url}`);
  }

  private async startOne(): Promise<Ready> {
    const id = `w${++this.next}`;
    const dataDir = join(this.scratch, id);
    cpSync(this.template, dataDir, { recursive: true });
    return { id, weft: await startWeft({ dataDir }) };
  }

  private async dispose(ready: Ready): Promise<void> {
    await ready.weft.stop();
    rmSync(ready.weft.dataDir, { recursive: true, force: true });
  }
}

/** Log records at error level or above (pino: 50 error, 60 fatal), or answering a 5xx. */
function errorRecords(logs: unknown[]): string[] {
  return logs
    .filter((l): l is Record<string, unknown> => typeof l === 'object' && l !== null)
    .filter((l) => Number(l.level) >= 50 || Number((l.res as { statusCode?: number } | undefined)?.statusCode) >= 500)
    .map((l) => {
      const err = (l.err as { message?: string } | undefined)?.message;
      return `${String(l.msg ?? '')}${err ? `: ${err}` : ''}${l.url ? ` (${String(l.url)})` : ''}`.slice(0, 400);
    });
}
