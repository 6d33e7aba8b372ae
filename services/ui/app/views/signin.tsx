import { useState } from 'preact/hooks';
import { ApiError, checkKey } from '../api';
import { href, navigate } from '../route';
import { setKey } from '../session';

/**
 * Sign in with an API key: checked against weft, then kept for this browser tab only. Then on to
 * `next` (the URL the user opened, e.g. a shared trace link), else the projects.
 */
export function SignIn({ notice, next }: { notice?: string; next?: string | null }) {
  const [key, setKeyInput] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await checkKey(key.trim());
      setKey(key.trim());
      navigate(next && next.startsWith('#/') && !next.startsWith('#/signin') ? next : href([]), { replace: true });
    } catch (err) {
      setError(err instanceof ApiError ? `${err.status}: ${err.reason}` : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="signin">
      <form class="card" onSubmit={submit}>
        <h1>weft</h1>
        <p class="muted">Traces, threads, costs and datasets of your LLM apps.</p>
        {notice ? <p class="notice">{notice}</p> : null}
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          autofocus
          placeholder="weft_…"
          value={key}
          onInput={(e) => setKeyInput((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={busy || key.trim() === ''}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        {error ? (
          <p class="error-text" role="alert">
            {error}
          </p>
        ) : null}
        <p class="hint">
          The key is sent as HTTP Basic <code>api:&lt;key&gt;</code> and kept in this tab's session storage only. Create one with{' '}
          <code>npm run weft -- keys create --user you --entity team --url {location.origin} --api-key &lt;admin key&gt;</code> (the admin
          key is printed at the server's first start; with <code>WEFT_API_KEY</code> set to it, <code>--url</code> and{' '}
          <code>--api-key</code> can be left out).
        </p>
      </form>
    </div>
  );
}
