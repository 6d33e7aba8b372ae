export * from './connection';
export * from './migrate';
export * from './call-part-row';
export * from './call-parts';
export * from './errors';
export * from './call-part-tsv';
export * from './cluster-ddl';
export * from './call-part-rowbinary';
