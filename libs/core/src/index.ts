export * from './errors';
export * from './ids';
export * from './time';
export * from './logger';
export * from './config';
export * from './auth';
export * from './refs';
export * from './metrics';
