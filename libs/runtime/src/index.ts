// What other packages use (tests and benches included).
export { compose, type Weft } from './compose';
export { needs, type Role, type RoleName } from './role';
export { runWeft } from './program';
