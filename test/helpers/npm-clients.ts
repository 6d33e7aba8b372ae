import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installAside } from './install-aside';
import { REPO_ROOT } from './paths';

const run = promisify(execFile);

/**
 * npm packages a test drives as their users install them, pinned, into a directory of their own
 * under .cache/ (gitignored; installAside), apart from the project's node_modules: one copy of
 * each (the AI SDK and the OTel SDK it reports to share one @opentelemetry/api). Returns the
 * directory, where a script placed beside node_modules imports them.
 */
export async function ensureNpmPackages(name: string, packages: string[]): Promise<string> {
  const dir = join(REPO_ROOT, '.cache', name);
  await installAside(
    dir,
    (d) => existsSync(join(d, '.installed')),
    async (building) => {
      await run('mkdir', ['-p', building]);
      writeFileSync(join(building, 'package.json'), JSON.stringify({ name: 'weft-test-clients', private: true, type: 'module' }));
      await run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--save-exact', ...packages], {
        cwd: building,
        timeout: 600_000,
      });
      writeFileSync(join(building, '.installed'), `${packages.join('\n')}\n`);
    },
  );
  return dir;
}

/** The Vercel AI SDK 6 with an OpenAI-compatible provider, and the OpenTelemetry Node SDK with its OTLP/HTTP exporter. */
export const AI_SDK_CLIENTS = [
  'ai@6.0.333',
  '@ai-sdk/openai-compatible@2.0.92',
  'zod@4.3.6',
  '@opentelemetry/api@1.9.1',
  '@opentelemetry/sdk-node@0.216.0',
  '@opentelemetry/exporter-trace-otlp-proto@0.216.0',
];

export const ensureAiSdk = () => ensureNpmPackages('ai-sdk-6.0.333', AI_SDK_CLIENTS);
