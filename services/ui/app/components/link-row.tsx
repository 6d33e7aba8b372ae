import type { ComponentChildren } from 'preact';
import { navigate } from '../route';

/**
 * A table row that opens `to` on click or Enter (it takes focus with Tab). Put a real link to
 * `to` in its first cell too, so the row can be opened in a new tab.
 */
export function LinkRow({ to, children }: { to: string; children: ComponentChildren }) {
  return (
    <tr class="clickable" tabIndex={0} onClick={() => navigate(to)} onKeyDown={(e) => e.key === 'Enter' && navigate(to)}>
      {children}
    </tr>
  );
}
