export * from './compose';
export * from './role';
export * from './store';
export * from './bus';
export * from './program';
