/**
 * A call's exception as a reader expects it. The Weave SDK stores it as JSON
 * (`{"type", "message", "traceback": [{filename, line_number, function_name, text}]}`): shown as
 * Python prints it. Anything else (OTLP status messages, other clients) is shown as it is.
 */
interface Frame {
  filename?: string;
  line_number?: number | null;
  function_name?: string;
  text?: string | null;
}

/** `ValueError: message`, the one-line form (tooltips, error marks). */
export function exceptionHeadline(exception: string): string {
  const e = parse(exception);
  return e ? `${e.type}: ${e.message}` : exception;
}

/** The full form: Python's traceback layout when the SDK sent frames. */
export function exceptionText(exception: string): string {
  const e = parse(exception);
  if (!e) return exception;
  const head = `${e.type}: ${e.message}`;
  if (!e.traceback?.length) return head;
  const frames = e.traceback.map((f) => {
    const at = `  File "${f.filename ?? '?'}", line ${f.line_number ?? '?'}, in ${f.function_name ?? '?'}`;
    return f.text ? `${at}\n    ${f.text.trim()}` : at;
  });
  return ['Traceback (most recent call last):', ...frames, head].join('\n');
}

function parse(exception: string): { type: string; message: string; traceback?: Frame[] } | null {
  if (!exception.startsWith('{')) return null;
  try {
    const v = JSON.parse(exception) as Record<string, unknown>;
    if (typeof v.type !== 'string') return null;
    return {
      type: v.type,
      message: typeof v.message === 'string' ? v.message : JSON.stringify(v.message ?? ''),
      traceback: Array.isArray(v.traceback) ? (v.traceback as Frame[]) : undefined,
    };
  } catch {
    return null;
  }
}
