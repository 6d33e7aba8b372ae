import { unauthorized } from './errors';

/** How an endpoint authenticates, as the interface assigns it. */
export type AuthScheme = 'basic' | 'bearer';

/**
 * Who is calling. Filled by the authentication hook of libs/http before any route runs,
 * from the API key store (libs/auth).
 */
export interface Caller {
  /** Stable user id, written as `svc_user_id` on everything this caller creates. */
  userId: string;
  /** The key's user name: the one display name of this user (the UI's, the SDK's "Logged in as"). */
  userName?: string;
  /** Id of the API key used (never the key itself). */
  keyId: string;
  /** Admins may use every entity. */
  isAdmin: boolean;
  /** Entities (teams) the caller belongs to; ignored when isAdmin. */
  entities: readonly string[];
  /** The entity used when a request names none (e.g. /v1/preview/models without `entity`). */
  defaultEntity?: string;
}

export interface Credential {
  scheme: AuthScheme;
  key: string;
}

/**
 * Extracts the API key from an Authorization header. Basic carries `api:<key>` (the username
 * is ignored, as the reference's clients send it); Bearer carries `<key>`. Either is accepted on
 * every endpoint (stock exporters and SDKs send Bearer); `expected`, the interface's scheme for
 * the endpoint, only shapes the message when the header is missing.
 */
export function parseAuthorization(header: string | undefined, expected: AuthScheme): Credential {
  if (!header)
    throw unauthorized(`missing Authorization header (${expected === 'basic' ? 'Basic api:<key>' : 'Bearer <key>'}; either scheme works)`);
  const space = header.indexOf(' ');
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
  const value = space < 0 ? '' : header.slice(space + 1).trim();
  if (scheme === 'bearer') {
    if (!value) throw unauthorized('empty Bearer token');
    return { scheme: 'bearer', key: value };
  }
  if (scheme !== 'basic') throw unauthorized(`unsupported Authorization scheme '${scheme}': send Basic api:<key> or Bearer <key>`);
  let decoded: string;
  try {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) throw new Error('not base64');
    decoded = Buffer.from(value, 'base64').toString('utf8');
  } catch {
    throw unauthorized('malformed Basic credentials');
  }
  const colon = decoded.indexOf(':');
  const key = colon < 0 ? '' : decoded.slice(colon + 1);
  if (!key) throw unauthorized('Basic credentials must be api:<key>');
  return { scheme: 'basic', key };
}

/** Splits and checks a `<entity>/<project>` id. */
export function parseProjectId(projectId: string): { entity: string; project: string } | null {
  const slash = projectId.indexOf('/');
  if (slash <= 0 || slash === projectId.length - 1 || projectId.indexOf('/', slash + 1) >= 0) return null;
  return { entity: projectId.slice(0, slash), project: projectId.slice(slash + 1) };
}
