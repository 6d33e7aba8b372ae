import { href } from './route';

/**
 * The links the Weave SDK prints (weave/trace/urls.py), as the UI's hash routes:
 *   /<e>/<p>/weave                                   → the project's calls
 *   /<e>/<p>/r/call/<id>, /<e>/<p>/weave/r/call/<id>, /<e>/<p>/weave/calls/<id> → the call in its trace
 *   /<e>/<p>/weave/objects/<name>/versions/<digest>  → that object version (datasets are objects)
 *   /<e>/<p>/weave/ops/<name>/versions/<digest>      → that op version
 *   /<e>/<p>/weave/leaderboards/<name>               → the leaderboard
 *   /<e>/<p>/weave/agents/conversations/<id>         → the thread
 *   /<e>/<p>/weave/traces?view=<name>                → the calls as that saved view shows them (SavedView.ui_url)
 * Anything else under /<e>/<p>/weave opens the project. Null: not such a link.
 */
export function hashForSdkPath(pathname: string, search = ''): string | null {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const [entity, project, ...rest] = parts;
  if (!entity || !project) return null;
  const at = (...view: string[]) => href(['p', entity, project, ...view]);
  if (rest[0] === 'r' && rest[1] === 'call' && rest[2]) return at('call', rest[2]);
  if (rest[0] !== 'weave') return null;
  const [kind, name, sub, version] = rest.slice(1);
  if (kind === 'r' && name === 'call' && sub) return at('call', sub);
  if (kind === 'calls' && name) return at('call', name);
  if ((kind === 'objects' || kind === 'ops') && name) {
    const v = sub === 'versions' && version ? version : undefined;
    return href(['p', entity, project, 'objects', name], { v });
  }
  if (kind === 'leaderboards' && name) return at('leaderboards', name);
  if (kind === 'agents' && name === 'conversations' && sub) return at('threads', sub);
  const view = new URLSearchParams(search).get('view');
  if (kind === 'traces' && view) return href(['p', entity, project, 'calls'], { view });
  return at('calls');
}
