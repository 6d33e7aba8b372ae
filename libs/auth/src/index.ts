export * from './keys';
export * from './key-store';
export * from './authenticator';
export * from './admin-routes';
export * from './bootstrap';
export * from './setup';
export * from './graphql-routes';
