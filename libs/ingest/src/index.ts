export * from './envelope';
export * from './call-ingest';
export * from './coalesce';
export * from './call-batch';
