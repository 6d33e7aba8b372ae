import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { bearerAuth, Client } from './helpers/client';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

/**
 * What a newcomer's first `npm start` meets on a busy machine: the standard OTLP/gRPC port
 * held by another program (a Collector, Jaeger, Phoenix), a second weft on the same data dir,
 * and the one-time admin key, which must still be on screen when start-up ends.
 */
const STANDARD_GRPC_PORT = 4317;
const started: (RunningWeft | ChildProcess)[] = [];

afterAll(async () => {
  for (const p of started.reverse()) {
    if ('stop' in p) await p.stop();
    else if (p.exitCode === null) {
      p.kill('SIGTERM');
      await new Promise((resolve) => p.once('exit', resolve));
    }
  }
});

/** Another process listening on `port` (0: a free one) on every address; resolves with the port it holds. */
async function holdPort(port: number): Promise<{ port: number; proc: ChildProcess }> {
  const script = `const s = require('net').createServer().on('error', (e) => { console.log('error ' + e.code); }).listen(${port}, '0.0.0.0', () => console.log('holding ' + s.address().port));`;
  const proc = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(proc);
  const line = await new Promise<string>((resolve) => createInterface({ input: proc.stdout! }).once('line', resolve));
  // Already held by some other program on this machine: it is taken all the same.
  if (line === 'error EADDRINUSE') return { port, proc };
  const m = /^holding (\d+)$/.exec(line);
  if (!m) throw new Error(`could not hold port ${port}: ${line}`);
  return { port: Number(m[1]), proc };
}

/** The message of a start that failed (startWeft rejects with the process's stderr). */
async function failedStart(opts: Parameters<typeof startWeft>[0]): Promise<string> {
  const err = await startWeft(opts).then(
    (w) => {
      started.push(w);
      throw new Error('weft started');
    },
    (e: unknown) => e as Error,
  );
  return err.message;
}

type LogLine = { msg?: string; level?: number; api_key?: string };

describe('the first start', () => {
  it('starts without the gRPC receiver when 4317 is taken and WEFT_OTLP_GRPC_PORT is unset, saying so in one line; the admin key is shown again last', async () => {
    await holdPort(STANDARD_GRPC_PORT);
    let reminder!: () => void;
    const reminded = new Promise<void>((resolve) => (reminder = resolve));
    const weft = await startWeft({
      // Unset: the standard port if free. No bootstrap key: the first start creates the admin key.
      env: { WEFT_OTLP_GRPC_PORT: '', WEFT_BOOTSTRAP_API_KEY: '' },
      onLog: (l) => {
        if ((l as LogLine)?.msg?.startsWith('admin API key')) reminder();
      },
    });
    started.push(weft);
    await reminded;
    const logs = weft.logs as LogLine[];

    expect(weft.grpcPort).toBeNull();
    const naming = logs.filter((l) => JSON.stringify(l).includes('WEFT_OTLP_GRPC_PORT'));
    expect(naming).toHaveLength(1);
    expect(naming[0]!.msg).toContain(`port ${STANDARD_GRPC_PORT} is already in use`);
    // grpc-js's own bind message stays out of the way (not a raw stderr line, not a warning).
    expect(logs.filter((l) => typeof l === 'string')).toEqual([]);

    // Created at the start of the log, and repeated as its last line with how to make more keys.
    const created = logs.find((l) => l.msg?.startsWith('created the first admin API key'));
    const key = created?.api_key;
    expect(key).toMatch(/^weft_/);
    const last = logs.at(-1)!;
    expect(last.msg).toContain(key);
    expect(last.msg).toContain('keys create');
    expect(logs.findIndex((l) => l.msg === 'listening')).toBeLessThan(logs.length - 1);

    // HTTP works; the key shown works (Bearer, on a Basic route of the interface).
    const r = await new Client(weft.url, bearerAuth(key!)).post('/calls/query_stats', { project_id: 'first/hour' });
    expect(r.status).toBe(200);
  });

  it('stops with one line naming WEFT_OTLP_GRPC_PORT when it is set to a taken port', async () => {
    const { port } = await holdPort(0);
    const message = await failedStart({ env: { WEFT_OTLP_GRPC_PORT: String(port) } });
    expect(message).toContain(`weft all-in-one failed to start: WEFT_OTLP_GRPC_PORT=${port}: the OTLP/gRPC port ${port} is already in use`);
    expect(message).not.toMatch(/^\s+at /m);
  });

  it('stops with one line when another weft has the data dir', async () => {
    const dataDir = newDataDir('first-start-twice');
    const first = await startWeft({ dataDir });
    started.push(first);
    const message = await failedStart({ dataDir });
    expect(message).toContain(
      `weft all-in-one failed to start: data dir ${dataDir} is in use by another weft process (pid ${first.proc.pid})`,
    );
    expect(message).toContain('WEFT_DATA_DIR');
    // Neither a stack trace nor the embedded engine's own lock error.
    expect(message).not.toMatch(/^\s+at /m);
    expect(message).not.toContain('Cannot lock file');
    // The first one is unharmed.
    expect((await fetch(`${first.url}/health`)).status).toBe(200);
  });

  it('stops with one line naming PORT when the HTTP port is taken', async () => {
    const { port } = await holdPort(0);
    const message = await failedStart({ env: { PORT: String(port) } });
    expect(message).toContain(`weft all-in-one failed to start: PORT=${port}: port ${port} is already in use`);
    expect(message).not.toMatch(/^\s+at /m);
  });
});
