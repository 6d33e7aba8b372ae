import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { withEngineThreadPool } from '@weft/core';
import { HARNESS_API_KEY } from './client';
import { REPO_ROOT, TEST_ROOT } from './paths';

export interface RunningWeft {
  url: string;
  port: number;
  /** The OTLP/gRPC receiver's port, where the gateway runs (tests bind it to a free port). */
  grpcPort: number | null;
  dataDir: string;
  proc: ChildProcess;
  /** Log lines seen so far (JSON-parsed where possible). */
  logs: unknown[];
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

/** A fresh data directory under the test scratch root. */
export function newDataDir(label: string): string {
  return mkdtempSync(join(TEST_ROOT, `${label}-`));
}

/**
 * Starts the real all-in-one server as its own process (real HTTP, embedded ClickHouse),
 * on a free port, and resolves when it logs that it is listening.
 */
export async function startWeft(
  opts: {
    dataDir?: string;
    env?: Record<string, string>;
    /**
     * A service main other than the all-in-one: TypeScript (run through tsx), or JavaScript run as
     * is (the compiled build: `scripts/start.mjs` as `npm start`, `dist/<main>.mjs`).
     */
    entry?: string;
    /** Extra node options (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
    nodeArgs?: string[];
    /** Called with each log record as it comes, also before the server listens. */
    onLog?: (record: unknown) => void;
    /**
     * The largest file the process may write, in KiB (`ulimit -f`): a write past it fails with
     * EFBIG, as a full disk fails a write, for the process's own files only.
     */
    fileSizeLimitKiB?: number;
  } = {},
): Promise<RunningWeft> {
  const dataDir = opts.dataDir ?? newDataDir('weft');
  const entry = opts.entry ?? 'services/all-in-one/src/main.ts';
  const args = [...(opts.nodeArgs ?? []), ...(/\.[cm]?js$/.test(entry) ? [] : ['--import', 'tsx']), entry];
  // The limit through a shell that then becomes node (exec: the pid stays node's).
  const [command, argv] =
    opts.fileSizeLimitKiB === undefined
      ? [process.execPath, args]
      : ['/bin/sh', ['-c', 'ulimit -f "$1" && shift && exec "$@"', 'sh', String(opts.fileSizeLimitKiB), process.execPath, ...args]];
  const proc = spawn(command, argv, {
    cwd: REPO_ROOT,
    // WEFT_OTLP_GRPC_PORT=0: any free port, never the standard 4317, so servers can run side by side.
    env: {
      ...withEngineThreadPool(process.env),
      PORT: '0',
      HOST: '127.0.0.1',
      WEFT_DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      WEFT_BOOTSTRAP_API_KEY: HARNESS_API_KEY,
      WEFT_OTLP_GRPC_PORT: '0',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: unknown[] = [];
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  let grpcPort: number | null = null;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL'); // never leave an orphan behind
      reject(new Error(`weft did not start in time\n${stderr}`));
    }, 120_000);
    const rl = createInterface({ input: proc.stdout! });
    rl.on('line', (line) => {
      let parsed: unknown = line;
      try {
        parsed = JSON.parse(line);
      } catch {
        /* plain text line */
      }
      logs.push(parsed);
      opts.onLog?.(parsed);
      const rec = parsed as { msg?: string; port?: number; otlpGrpcPort?: number };
      if (rec?.msg === 'OTLP/gRPC listening' && typeof rec.otlpGrpcPort === 'number') grpcPort = rec.otlpGrpcPort;
      if (rec?.msg === 'listening' && typeof rec.port === 'number') {
        clearTimeout(timer);
        resolve(rec.port);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`weft exited with ${code} before listening\n${stderr}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    grpcPort,
    dataDir,
    proc,
    logs,
    async stop() {
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (proc.exitCode !== null) return;
      proc.kill('SIGKILL');
      await exited;
    },
  };
}
