import type { ComponentChildren } from 'preact';
import { clearKey } from '../session';
import { href, navigate, projectHref } from '../route';
import { LagBanner } from './lag-banner';

const TABS: [string, string][] = [
  ['calls', 'Calls'],
  ['threads', 'Threads'],
  ['evaluations', 'Evaluations'],
  ['queues', 'Queues'],
  ['monitors', 'Monitors'],
  ['playground', 'Playground'],
  ['analytics', 'Analytics'],
  ['alerts', 'Alerts'],
  ['objects', 'Objects'],
  ['delivery', 'Delivery'],
  ['settings', 'Settings'],
];

/** The frame of every signed-in view: brand, project, tabs, sign out. */
export function Layout({ projectId, tab, children }: { projectId?: string; tab?: string; children: ComponentChildren }) {
  return (
    <div class="frame">
      <header class="topbar">
        <a class="brand" href={href([])}>
          weft
        </a>
        {projectId ? (
          <a class="project-name" href={href([])} title="Pick another project">
            {projectId} ▾
          </a>
        ) : null}
        {projectId ? (
          <nav class="tabs" aria-label="Views">
            {TABS.map(([id, label]) => (
              <a
                key={id}
                href={projectHref(projectId, [id])}
                class={tab === id ? 'tab active' : 'tab'}
                aria-current={tab === id ? 'page' : undefined}
              >
                {label}
              </a>
            ))}
          </nav>
        ) : null}
        <span class="spacer" />
        <button
          type="button"
          class="link"
          onClick={() => {
            clearKey();
            navigate(href(['signin']));
          }}
        >
          Sign out
        </button>
      </header>
      {projectId ? <LagBanner projectId={projectId} /> : null}
      <main class="content">{children}</main>
    </div>
  );
}
