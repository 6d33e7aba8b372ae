export * from './python-json';
export * from './digest';
export * from './lossless';
