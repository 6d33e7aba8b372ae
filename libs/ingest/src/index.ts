export * from './envelope';
export * from './call-ingest';
export * from './coalesce';
export * from './call-batch';
export * from './redaction';
export * from './sampling';
export * from './ingest-settings';
