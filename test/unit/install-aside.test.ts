import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installAside } from '../helpers/install-aside';

const complete = (dir: string) => existsSync(join(dir, '.installed'));
const builder = (label: string, gate: Promise<void>) => async (dir: string) => {
  mkdirSync(dir);
  await gate;
  writeFileSync(join(dir, '.installed'), label);
};

describe('installAside', () => {
  it('keeps the first finished install when two test files install at once', async () => {
    // A later build replacing the target would delete files a running test is importing from
    // (CI saw `No module named gql.graphql_request` mid-import that way).
    const root = mkdtempSync(join(tmpdir(), 'install-aside-'));
    const target = join(root, 'venv');
    let releaseSlow!: () => void;
    const slowGate = new Promise<void>((r) => (releaseSlow = r));
    const slow = installAside(target, complete, builder('slow', slowGate));
    await installAside(target, complete, builder('fast', Promise.resolve()));
    expect(readFileSync(join(target, '.installed'), 'utf8')).toBe('fast');
    releaseSlow();
    await slow;
    expect(readFileSync(join(target, '.installed'), 'utf8')).toBe('fast');
    expect(readdirSync(root)).toEqual(['venv']);
  });

  it('replaces a directory an interrupted install left without its marker', async () => {
    const root = mkdtempSync(join(tmpdir(), 'install-aside-'));
    const target = join(root, 'venv');
    mkdirSync(target);
    writeFileSync(join(target, 'half'), '');
    await installAside(target, complete, builder('done', Promise.resolve()));
    expect(readdirSync(target).sort()).toEqual(['.installed']);
  });
});
