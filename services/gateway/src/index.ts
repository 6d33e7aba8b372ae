// What other packages use, by name (a package that needs more adds it here).
export { gatewayRole } from './role';
