// What other packages use, by name (a package that needs more adds it here).
export { queryRole } from './role';
export { AlertWorker } from './alerts/worker';
export { urlPolicyOf } from './alerts/url-guard';
