import type { AuthScheme, Caller } from '@weft/core';

/**
 * Resolves a request's credentials to a caller, or throws a 401 ApiError. The implementation
 * is the key store's (libs/auth `setupAuth`); there is deliberately no accept-anything one.
 */
export interface Authenticator {
  authenticate(authorization: string | undefined, scheme: AuthScheme): Promise<Caller>;
}
