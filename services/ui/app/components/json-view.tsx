import { useState } from 'preact/hooks';
import { truncatedMarker, truncatedNote } from '../truncated';

/** Collapsible JSON: objects and arrays fold; deep or long ones start folded. */
export function JsonView({ value, depth = 0, name }: { value: unknown; depth?: number; name?: string }) {
  const isObj = value !== null && typeof value === 'object';
  const entries = isObj ? (Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as object)) : [];
  const [open, setOpen] = useState(depth < 2 && entries.length <= 50);
  const [all, setAll] = useState(false);
  const label = name !== undefined ? <span class="json-key">{name}: </span> : null;
  const marker = truncatedMarker(value);
  if (marker)
    return (
      <div class="json-line json-long">
        {label}
        <div class="truncated-note muted">{truncatedNote(marker)}</div>
        {/* The preview can be up to WEFT_MAX_VALUE_BYTES: shown as any long string is. */}
        <Scalar value={`${marker.preview}…`} />
      </div>
    );
  if (!isObj)
    return (
      <div class="json-line">
        {label}
        <Scalar value={value} />
      </div>
    );
  const [lb, rb] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0)
    return (
      <div class="json-line">
        {label}
        <span class="json-punct">
          {lb}
          {rb}
        </span>
      </div>
    );
  return (
    <div class="json-node">
      <button type="button" class="json-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? '▾' : '▸'} {label}
        <span class="json-punct">{lb}</span>
        {!open ? (
          <span class="json-summary">
            {' '}
            {entries.length} {Array.isArray(value) ? 'items' : 'keys'} {rb}
          </span>
        ) : null}
      </button>
      {open ? (
        <div class="json-children">
          {(all ? entries : entries.slice(0, ENTRIES_PREVIEW)).map(([k, v]) => (
            <JsonView key={k} name={k} value={v} depth={depth + 1} />
          ))}
          {!all && entries.length > ENTRIES_PREVIEW ? (
            <button type="button" class="link show-all" onClick={() => setAll(true)}>
              Show all {entries.length.toLocaleString('en-US')} {Array.isArray(value) ? 'items' : 'keys'}
            </button>
          ) : null}
          <div class="json-punct">{rb}</div>
        </div>
      ) : null}
    </div>
  );
}

/**
 * Strings longer than this show their start (STRING_PREVIEW_CHARS) and a "Show all": laying
 * out megabytes of text (a document as an input) froze the page for seconds.
 */
export const STRING_TRUNCATE_CHARS = 64 * 1024;
export const STRING_PREVIEW_CHARS = 16 * 1024;
/** Entries of an object or array rendered before a "Show all". */
export const ENTRIES_PREVIEW = 500;

const fmtSize = (chars: number) => (chars >= 1024 * 1024 ? `${(chars / 1024 / 1024).toFixed(1)} M` : `${Math.ceil(chars / 1024)} K`);

function Scalar({ value }: { value: unknown }) {
  const [all, setAll] = useState(false);
  if (value === null || value === undefined) return <span class="json-null">null</span>;
  if (typeof value === 'string') {
    if (value.length > STRING_TRUNCATE_CHARS && !all)
      return (
        <div class="json-long">
          <div class="truncated-note muted">
            The first {fmtSize(STRING_PREVIEW_CHARS)} of {fmtSize(value.length)} characters.{' '}
            <button type="button" class="link show-all" onClick={() => setAll(true)}>
              Show all
            </button>
          </div>
          <pre class="json-string long truncated">{value.slice(0, STRING_PREVIEW_CHARS)}…</pre>
        </div>
      );
    if (value.length > 300 || value.includes('\n')) return <pre class="json-string long">{value}</pre>;
    return <span class="json-string">"{value}"</span>;
  }
  if (typeof value === 'number') return <span class="json-number">{String(value)}</span>;
  if (typeof value === 'boolean') return <span class="json-bool">{String(value)}</span>;
  return <span>{String(value)}</span>;
}
