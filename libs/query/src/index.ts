export * from './params';
export * from './expr';
export * from './calls';
export * from './call-fields';
export * from './costs';
export * from './threads';
export * from './aggregates';
export * from './purge-ids';
