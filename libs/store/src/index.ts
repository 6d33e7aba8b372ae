export * from './connection';
export * from './migrate';
export * from './call-parts';
