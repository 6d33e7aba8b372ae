export * from './writer';
export * from './role';
