/**
 * A value weft stored truncated (WEFT_MAX_VALUE_BYTES, libs/store truncated-value.ts):
 * `{"_weft_truncated": true, "original_bytes", "preview"}`. The UI shows it as what it is — the
 * start of a larger value — not as an object with three keys.
 */
export interface TruncatedMarker {
  originalBytes: number;
  preview: string;
}

export function truncatedMarker(value: unknown): TruncatedMarker | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  if (v._weft_truncated !== true || typeof v.original_bytes !== 'number' || typeof v.preview !== 'string') return null;
  return { originalBytes: v.original_bytes, preview: v.preview };
}

/** `1.5 MB`, `200 KB`: a marker's sizes in words. */
export function byteSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${Math.ceil(bytes / 1024)} KB`;
}

/** The note above a truncated value's preview. */
export function truncatedNote(m: TruncatedMarker): string {
  return `Truncated when stored: the first ${byteSize(utf8Bytes(m.preview))} of ${byteSize(m.originalBytes)} (over the server's WEFT_MAX_VALUE_BYTES).`;
}

function utf8Bytes(s: string): number {
  return new TextEncoder().encode(s).length;
}
