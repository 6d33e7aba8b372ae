// What other packages use, by name (a package that needs more adds it here).
export { inferenceRole } from './role';
