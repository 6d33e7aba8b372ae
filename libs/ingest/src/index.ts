export * from './envelope';
export * from './call-ingest';
