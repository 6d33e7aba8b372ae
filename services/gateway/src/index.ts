export * from './routes';
export * from './calls';
export * from './otel';
export * from './otlp-http';
export * from './objects';
export * from './otlp-grpc';
