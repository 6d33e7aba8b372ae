/**
 * How a download goes out: its content type and file name (the framing sendStream writes). Its
 * own module, as both the row writers (row-export.ts) and the Parquet pipe (parquet-pipe.ts) take it.
 */
const CONTENT_TYPES = {
  jsonl: 'application/jsonl',
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  parquet: 'application/vnd.apache.parquet',
};

export function downloadFraming(format: keyof typeof CONTENT_TYPES, filename: string, onAbort: () => void) {
  return {
    contentType: CONTENT_TYPES[format],
    headers: { 'content-disposition': `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '-')}.${format}"` },
    toText: (b: Buffer | string) => b,
    onAbort,
  };
}

export type DownloadFraming = ReturnType<typeof downloadFraming>;
