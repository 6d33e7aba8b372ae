import { useState } from 'preact/hooks';

/**
 * Which of the calls table's columns show (the URL's `hide`): a menu of checkboxes, in the page
 * only while open (so its labels never stand beside the filter's own "Status", "Feedback"…).
 */
export function ColumnsMenu({
  columns,
  hidden,
  onChange,
}: {
  columns: { id: string; label: string }[];
  hidden: string[];
  onChange: (hidden: string[]) => void;
}) {
  const [open, setOpen] = useState(false);
  return (
    <details class="columns-menu" open={open} onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>Columns{hidden.length ? ` (${columns.length - hidden.length}/${columns.length})` : ''}</summary>
      {open ? (
        <div class="menu-panel" role="group" aria-label="Columns shown">
          {columns.map((c) => (
            <label key={c.id} class="check">
              <input
                type="checkbox"
                checked={!hidden.includes(c.id)}
                // At least one column stays.
                disabled={!hidden.includes(c.id) && hidden.length === columns.length - 1}
                onChange={(e) =>
                  onChange(
                    (e.target as HTMLInputElement).checked
                      ? hidden.filter((h) => h !== c.id)
                      : columns.map((x) => x.id).filter((id) => id === c.id || hidden.includes(id)),
                  )
                }
              />{' '}
              {c.label}
            </label>
          ))}
        </div>
      ) : null}
    </details>
  );
}
