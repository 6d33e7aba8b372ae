import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Every generated key starts with this, so leaked keys are easy to recognise and scan for. */
export const KEY_PREFIX = 'weft_';

/** A new API key: `weft_` + 32 random bytes, base64url (256 bits of entropy). */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * How a key is stored: its SHA-256 in hex. Generated keys carry 256 random bits, so a fast
 * hash is enough (no dictionary to guess from); the key itself is never stored.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Compares two stored-form hashes without leaking where they differ. */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What listings show of a key: enough to recognise it, far too little to use it. */
export function displayPrefix(key: string): string {
  return key.slice(0, Math.min(12, Math.max(4, Math.floor(key.length / 3))));
}

/** Public identifiers of keys and users (never derived from the key). */
export const newKeyId = () => `key_${randomBytes(9).toString('base64url')}`;
export const newUserId = () => `user-${randomBytes(12).toString('base64url')}`;

/** `Authorization` value carrying a key the way the reference's clients send it. */
export const basicHeader = (key: string) => `Basic ${Buffer.from(`api:${key}`, 'utf8').toString('base64')}`;
