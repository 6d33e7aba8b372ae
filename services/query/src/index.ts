export * from './routes';
export * from './calls';
export * from './objects';
export * from './call-enrichment';
export * from './role';
