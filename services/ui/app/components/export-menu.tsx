import { useState } from 'preact/hooks';
import { download } from '../api';
import { ErrorBox } from './states';

/** "Export" as CSV, JSONL or Parquet of what a view shows (/calls/export, /table/export), downloaded by the browser. */
export function ExportMenu({ path, body, fallbackName }: { path: string; body: Record<string, unknown>; fallbackName: string }) {
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
        <option value="csv">CSV</option>
        <option value="jsonl">JSONL</option>
        <option value="parquet">Parquet</option>
      </select>
      {error ? <ErrorBox error={error} /> : null}
    </span>
  );
}
