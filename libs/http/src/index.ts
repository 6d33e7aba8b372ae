export * from './server';
export * from './errors';
export * from './auth';
export * from './route';
export * from './jsonl';
export * from './extra-route';
export * from './lossless';
export * from './program';
