export * from './params';
export * from './calls';
