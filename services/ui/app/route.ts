import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routes (`#/p/<entity>/<project>/calls?op=…`): one served page, and every view with its
 * filters is a URL that can be shared or bookmarked.
 */
export interface Route {
  path: string[];
  params: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const q = raw.indexOf('?');
  const pathPart = q >= 0 ? raw.slice(0, q) : raw;
  return {
    path: pathPart.split('/').filter(Boolean).map(decodeURIComponent),
    params: new URLSearchParams(q >= 0 ? raw.slice(q + 1) : ''),
  };
}

export function href(path: (string | undefined)[], params: Record<string, string | undefined | null> = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, v);
  const qs = p.toString();
  return `#/${path
    .filter((s): s is string => !!s)
    .map(encodeURIComponent)
    .join('/')}${qs ? `?${qs}` : ''}`;
}

export function projectHref(projectId: string, view: string[] = [], params: Record<string, string | undefined | null> = {}): string {
  const [entity, project] = projectId.split('/');
  return href(['p', entity, project, ...view], params);
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    window.addEventListener('hashchange', on);
    window.addEventListener('popstate', on);
    return () => {
      window.removeEventListener('hashchange', on);
      window.removeEventListener('popstate', on);
    };
  }, []);
  return route;
}
