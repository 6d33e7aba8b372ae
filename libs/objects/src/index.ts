export * from './refs';
export * from './json-path';
export * from './object-classes';
export * from './objects';
export * from './tables';
export * from './feedback';
export * from './resolve';
export * from './files';
