export * from './routes';
export * from './otel';
export * from './otlp-http';
export * from './objects';
export * from './role';
export * from './otlp-grpc';
