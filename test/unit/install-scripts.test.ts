import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths';

/**
 * `npm ci` warns about every dependency install script not covered by package.json's
 * `allowScripts` (issue 53, item 10): each is declared there (docs/development.md says why).
 */
describe('install scripts', () => {
  it('every dependency install script is declared in allowScripts', async () => {
    const { stdout } = await promisify(execFile)('npm', ['install-scripts', 'ls', '--json'], { cwd: REPO_ROOT, timeout: 60_000 });
    expect(JSON.parse(stdout)).toEqual({ allowScripts: [] });
  });
});
