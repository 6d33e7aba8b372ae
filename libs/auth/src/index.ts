// What other packages use, by name (a package that needs more adds it here).
export { basicHeader, hashApiKey } from './keys';
export { KeyStore } from './key-store';
export { KeyStoreAuthenticator } from './authenticator';
export { type AdminPath, adminRoutes, runAdmin } from './admin-routes';
export { setupAuth } from './setup';
export { graphqlRoutes } from './graphql-routes';
