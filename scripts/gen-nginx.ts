// `npm run gen:nginx`: composes every role in this process (a scratch data dir, as test/routes.test.ts
// does), takes the routes they register, and rewrites the generated locations of
// deploy/nginx/nginx.conf, and its copy in the Helm chart (deploy/helm/weft/files/nginx.conf: a
// copy, not a link, which helm warns about on every run). `npm run gen:nginx -- --check` only says
// whether the files are current.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadConfig } from '@weft/core';
import { createWeft } from '@weft/svc-all-in-one';
import { REPO_ROOT } from '@weft/harness';
import { nginxLocations, routeTablePaths, withLocations } from './nginx-locations';

const CONF = join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf');
const CHART_COPY = join(REPO_ROOT, 'deploy', 'helm', 'weft', 'files', 'nginx.conf');
const check = process.argv.includes('--check');

const dataDir = mkdtempSync(join(tmpdir(), 'weft-gen-nginx-'));
const config = loadConfig({ WEFT_DATA_DIR: dataDir, LOG_LEVEL: 'silent', WEFT_OTLP_GRPC_PORT: '0' });
const weft = await createWeft(config, createLogger('silent', { mode: 'test' }));
const routes = [...weft.routes];
await weft.close();
rmSync(dataDir, { recursive: true, force: true });

const current = readFileSync(CONF, 'utf8');
const generated = withLocations(current, nginxLocations(routes, routeTablePaths()));
const copyCurrent = readFileSync(CHART_COPY, 'utf8') === generated;
if (generated === current && copyCurrent) console.log('deploy/nginx/nginx.conf and the chart copy are current');
else if (check) {
  console.error('deploy/nginx/nginx.conf (or its copy in the chart) differs from the route table: run npm run gen:nginx');
  process.exitCode = 1;
} else {
  writeFileSync(CONF, generated);
  writeFileSync(CHART_COPY, generated);
  console.log('deploy/nginx/nginx.conf and deploy/helm/weft/files/nginx.conf: locations rewritten from the route table');
}
