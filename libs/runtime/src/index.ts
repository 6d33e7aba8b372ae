// What other packages use (tests and benches included).
export { compose, type Weft } from './compose';
export { PeriodicComponent, PeriodicWorker, type PeriodicWorkerOptions } from './periodic-worker';
export { needs, type Role, type RoleName } from './role';
export { runWeft } from './program';
