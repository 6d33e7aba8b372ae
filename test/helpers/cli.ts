import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './paths';

const exec = promisify(execFile);

/** Runs `weft …` (the package's bin) and returns its exit code and output. */
export async function weftCli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  try {
    const r = await exec(process.execPath, [join(REPO_ROOT, 'services/cli/bin/weft.mjs'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      timeout: 90_000,
    });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}
