import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadConfig } from '@weft/core';
import { HARNESS_API_KEY } from '@weft/harness';
import { createWeft } from '@weft/svc-all-in-one';

/**
 * The all-in-one in the benchmark's own process (its CPU and RSS are the bench's), on
 * BENCH_DATA_DIR (kept, so a loaded data set is reused) or a scratch directory, listening on a
 * free port with the harness's admin key. The rest of the environment configures it as usual.
 */
export async function startBenchWeft(label: string) {
  const dataDir = process.env.BENCH_DATA_DIR ?? mkdtempSync(join(tmpdir(), `weft-bench-${label}-`));
  const config = loadConfig({
    ...process.env,
    WEFT_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    PORT: '0',
    HOST: '127.0.0.1',
    // Any free port for OTLP/gRPC, never the standard 4317 (another weft may hold it).
    WEFT_OTLP_GRPC_PORT: '0',
    WEFT_BOOTSTRAP_API_KEY: HARNESS_API_KEY,
  });
  const weft = await createWeft(config, createLogger('warn', { mode: 'bench' }));
  await weft.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(weft.app.server.address() as { port: number }).port}`;
  return { weft, url, client: weft.store.client, dataDir };
}
