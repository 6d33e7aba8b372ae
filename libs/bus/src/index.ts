export * from './bus';
export * from './messages';
export * from './in-process';
