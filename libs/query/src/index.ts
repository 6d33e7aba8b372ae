export * from './params';
export * from './expr';
export * from './calls';
export * from './call-fields';
