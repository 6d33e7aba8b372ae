export * from './routes';
export * from './bundle';
