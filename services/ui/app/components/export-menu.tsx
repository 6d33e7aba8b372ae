import { useState } from 'preact/hooks';
import { download } from '../api';
import { ErrorBox } from './states';

const LABELS: Record<ExportFormat, string> = { csv: 'CSV', json: 'JSON', jsonl: 'JSONL', parquet: 'Parquet' };
export type ExportFormat = 'csv' | 'json' | 'jsonl' | 'parquet';

/**
 * "Export" as CSV, JSONL or Parquet (or the `formats` a route offers) of what a view shows
 * (/calls/export, /table/export, /evaluations/export), downloaded by the browser.
 */
export function ExportMenu({
  path,
  body,
  fallbackName,
  formats = ['csv', 'jsonl', 'parquet'],
}: {
  path: string;
  body: Record<string, unknown>;
  fallbackName: string;
  formats?: ExportFormat[];
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (format: string) => {
    setBusy(true);
    setError(null);
    try {
      await download(path, { ...body, format }, `${fallbackName}.${format}`);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="export-menu">
      <select
        aria-label="Export"
        disabled={busy}
        value=""
        onChange={(e) => {
          const format = (e.target as HTMLSelectElement).value;
          (e.target as HTMLSelectElement).value = '';
          if (format) void run(format);
        }}
      >
        <option value="">{busy ? 'Exporting…' : 'Export…'}</option>
        {formats.map((f) => (
          <option key={f} value={f}>
            {LABELS[f]}
          </option>
        ))}
      </select>
      {error ? <ErrorBox error={error} /> : null}
    </span>
  );
}
