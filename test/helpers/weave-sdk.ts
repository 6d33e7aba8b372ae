import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installAside } from './install-aside';
import { REPO_ROOT, TEST_ROOT } from './paths';

const run = promisify(execFile);

/**
 * The Weave SDK releases the end-to-end test runs, each pinned with what it needs to install
 * and run today: the newest on PyPI, and the newest of the 0.51 line (mid 2025, still widely
 * deployed; it writes calls with /call/upsert_batch and sends bodies without a Content-Type).
 * 0.51's GraphQL code calls gql 3's API, so gql is held below 4 for it.
 */
export const WEAVE_SDKS = [
  { version: '0.54.0', requirements: ['weave==0.54.0'] },
  { version: '0.51.59', requirements: ['weave==0.51.59', 'gql==3.5.3'] },
] as const;

/**
 * The python3 of a private virtualenv under .cache/ (gitignored) holding one pinned SDK,
 * installed from PyPI on first use (later runs need no network; see installAside).
 */
export async function ensureWeaveSdk(sdk: (typeof WEAVE_SDKS)[number]): Promise<string> {
  const venv = join(REPO_ROOT, '.cache', `weave-sdk-${sdk.version}`);
  const python = join(venv, 'bin', 'python3');
  await installAside(
    venv,
    (dir) => existsSync(join(dir, '.installed')),
    async (building) => {
      await run('python3', ['-m', 'venv', building]);
      await run(join(building, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', ...sdk.requirements], {
        timeout: 900_000,
      });
      writeFileSync(join(building, '.installed'), `${sdk.requirements.join(' ')}\n`);
    },
  );
  return python;
}

/**
 * The environment a new user gives the SDK (base URL, key, project), plus switches that keep
 * it off the internet and its on-disk response cache per run (the SDK shares one across
 * processes otherwise). `printLinks`: the SDK's own link printing, off unless asked.
 */
export function weaveUserEnv(o: {
  scratch: string;
  baseUrl: string;
  apiKey: string;
  project: string;
  printLinks?: boolean;
}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: o.scratch,
    WANDB_CONFIG_DIR: o.scratch,
    WEAVE_SERVER_CACHE_DIR: join(o.scratch, 'cache'),
    WANDB_ERROR_REPORTING: 'false',
    ...(o.printLinks ? {} : { WEAVE_PRINT_CALL_LINK: 'false' }),
    WANDB_BASE_URL: o.baseUrl,
    WANDB_API_KEY: o.apiKey,
    WEFT_PROJECT: o.project,
  };
}

/**
 * Runs test/weave-sdk/<script> with the newest pinned SDK as a new user runs it (weaveUserEnv plus
 * `extraEnv`, in a scratch HOME); resolves with its last output line that starts with `{`,
 * parsed, and rejects with its output's tail when it fails or prints none.
 */
export async function runWeaveScript<T>(
  script: string,
  args: string[],
  o: { baseUrl: string; apiKey: string; project: string; extraEnv?: Record<string, string> },
): Promise<T> {
  const python = await ensureWeaveSdk(WEAVE_SDKS[0]);
  const scratch = mkdtempSync(join(TEST_ROOT, `${script.replace(/\W/g, '-')}-`));
  const env = { ...weaveUserEnv({ scratch, baseUrl: o.baseUrl, apiKey: o.apiKey, project: o.project }), ...o.extraEnv };
  return new Promise((resolve, reject) => {
    const child = spawn(python, [join(REPO_ROOT, 'test', 'weave-sdk', script), ...args], { cwd: scratch, env });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => {
      const last = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .pop();
      if (code !== 0 || !last) reject(new Error(`${script} exited ${code}: ${out.slice(-4000)}`));
      else resolve(JSON.parse(last) as T);
    });
  });
}
