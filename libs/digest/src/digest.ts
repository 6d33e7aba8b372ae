import { createHash } from 'node:crypto';
import { pythonJsonDumps } from './python-json';

/**
 * The reference's `str_digest`: sha256, urlsafe base64 without padding, `-`→`X`, `_`→`Y`
 * (43 characters of [A-Za-z0-9]).
 */
export function strDigest(text: string): string {
  return bytesDigest(Buffer.from(text, 'utf8'));
}

export function bytesDigest(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64url').replace(/-/g, 'X').replace(/_/g, 'Y');
}

/** The canonical text of a value, as the newest reference hashes it: `json.dumps(val, sort_keys=True)`. */
export function canonicalJson(value: unknown): string {
  return pythonJsonDumps(value, { sortKeys: true });
}

/**
 * The text we store for a value: the canonical text, except that non-finite floats are
 * written as JSON numbers that read back as the same float (the canonical text would not parse).
 */
export function storageJson(value: unknown): string {
  return pythonJsonDumps(value, { sortKeys: true, nonFinite: 'storage' });
}

/** Digest of an object version's value. */
export function objectDigest(value: unknown): { digest: string; json: string } {
  const json = canonicalJson(value);
  return { digest: strDigest(json), json };
}

/** Digest of one table row (the newest reference sorts keys here too). */
export function rowDigest(row: unknown): string {
  return strDigest(canonicalJson(row));
}

/** A table's digest: lowercase hex sha256 of its row digests concatenated, in order. */
export function tableDigest(rowDigests: Iterable<string>): string {
  const h = createHash('sha256');
  for (const d of rowDigests) h.update(d, 'utf8');
  return h.digest('hex');
}

/** The digest of the table with no rows, `sha256(b"")`. */
export const EMPTY_TABLE_DIGEST = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
