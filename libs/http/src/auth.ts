import { createHash } from 'node:crypto';
import { parseAuthorization, type AuthScheme, type Caller } from '@weft/core';

/**
 * Resolves a request's credentials to a caller. The default accepts any well-formed key
 * (the walking skeleton); the security issue replaces it with a key store lookup.
 */
export interface Authenticator {
  authenticate(authorization: string | undefined, scheme: AuthScheme): Promise<Caller>;
}

export const permissiveAuthenticator: Authenticator = {
  async authenticate(authorization, scheme) {
    const { key } = parseAuthorization(authorization, scheme);
    const keyId = createHash('sha256').update(key).digest('hex').slice(0, 16);
    return { userId: `user-${keyId}`, keyId, isAdmin: true, entities: [] };
  },
};
