export * from './common';
export * from './calls';
export * from './objects';
export * from './inference';
export * from './endpoints';
export * from './validate';
export * from './openapi';
export * from './extra-endpoints';
