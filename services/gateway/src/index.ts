export * from './routes';
export * from './calls';
