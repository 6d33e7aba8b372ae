export * from './writer';
export * from './role';
export * from './retention';
