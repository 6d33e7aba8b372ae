import { execFile } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '@weft/harness';

const run = promisify(execFile);

/**
 * What the suite's tests/trace and tests/trace_server import, pinned. The PyPI wheel of weave
 * 0.52.29 has no `trace_server` extra, so the reference server's own dependencies (its
 * `trace_server` dependency group at the release commit) are listed here; litellm is held where
 * it accepts the suite's `openai<1.100`.
 */
export const SUITE_REQUIREMENTS = [
  'weave==0.52.29',
  'pytest==8.4.2',
  'pytest-asyncio==1.2.0',
  'pytest-timeout==2.4.0',
  // gql 4 prefers httpx2 when present and rejects the SDK's httpx.BasicAuth.
  'gql[httpx]==3.5.3',
  // The reference server's dependencies.
  'ddtrace==4.16.0',
  'boto3==1.44.8',
  'azure-storage-blob==12.25.1',
  'google-cloud-storage==3.17.1',
  'litellm==1.80.0',
  'opentelemetry-semantic-conventions-ai==0.5.1',
  'openinference-semantic-conventions==0.1.42',
  'emoji==2.16.0',
  // The suite's test dependencies.
  'openai==1.99.9',
  'sqlparse==0.5.0',
  'clickhouse_connect==0.11.0',
  'fastapi==0.165.0',
  'pillow==13.0.0',
  'moviepy==1.0.3',
  'reportlab==5.1.0',
  'freezegun==1.5.5',
  'respx==0.23.1',
  'moto[s3]==5.2.5',
  'flask==3.1.3',
  'filelock==4.3.1',
  'rich==15.0.0',
  'numpy==2.4.6',
  'datasets==5.2.0',
  'python-magic==0.4.27',
  'confluent-kafka==2.16.1',
];

/**
 * The python3 of .cache/weave-conformance-0.52.29 (gitignored), installed from PyPI on first use
 * (about 1 GB). Built aside and renamed into place, so an interrupted install never looks finished.
 */
export async function ensureSuiteVenv(log: (line: string) => void): Promise<string> {
  const venv = join(REPO_ROOT, '.cache', 'weave-conformance-0.52.29');
  const python = join(venv, 'bin', 'python3');
  const manifest = `${SUITE_REQUIREMENTS.join('\n')}\n`;
  const stamp = join(venv, '.installed');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === manifest) return python;
  log(`installing the suite's Python environment into ${venv} (a few minutes, once)`);
  const building = `${venv}.build-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  await run('python3', ['-m', 'venv', building]);
  await run(join(building, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', ...SUITE_REQUIREMENTS], {
    timeout: 1_800_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  writeFileSync(join(building, '.installed'), manifest);
  rmSync(venv, { recursive: true, force: true });
  renameSync(building, venv);
  return python;
}
