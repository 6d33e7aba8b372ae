import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from './paths';

export interface SharedClickHouse {
  /** For CLICKHOUSE_URL. */
  url: string;
  /** The engine's process (its CPU time is the store's share of a benchmark). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * One ClickHouse engine (chDB, data under `dataDir`) that several weft processes share over
 * ClickHouse's HTTP interface, as they share a ClickHouse server in the distributed mode (see
 * clickhouse-http-main.ts for what it is and is not). Its own process, on a free port.
 */
export async function startSharedClickHouse(dataDir: string): Promise<SharedClickHouse> {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'tools', 'harness', 'src', 'clickhouse-http-main.ts'), dataDir],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the shared ClickHouse did not start within 60 s\n${stderr}`));
    }, 60_000);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        const rec = JSON.parse(line) as { msg?: string; port?: number };
        if (rec.msg === 'listening' && typeof rec.port === 'number') {
          clearTimeout(timer);
          resolve(rec.port);
        }
      } catch {
        /* not ours */
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the shared ClickHouse exited before listening\n${stderr}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: proc.pid!,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const force = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(force);
    },
  };
}
