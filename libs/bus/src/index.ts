export * from './bus';
export * from './messages';
export * from './in-process';
export * from './codec';
export * from './group-commit';
export * from './kafka';
export * from './create';
