// What other packages use, by name (a package that needs more adds it here).
export { writerRole } from './role';
export { RetentionSweeper } from './retention';
