/** Reads a Server-Sent Events response as it arrives, noting when each event came in. */
export interface SseEvent {
  data: string;
  /** ms since the request was sent. */
  at: number;
}

export async function postSse(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  opts: { signal?: AbortSignal; onEvent?: (e: SseEvent, all: SseEvent[]) => void } = {},
): Promise<{ status: number; headers: Headers; events: SseEvent[]; json: any[]; text: string }> {
  const t0 = Date.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: opts.signal,
  });
  const events: SseEvent[] = [];
  let text = '';
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    text = await res.text();
    return { status: res.status, headers: res.headers, events, json: [], text };
  }
  const decoder = new TextDecoder();
  let buf = '';
  const reader = res.body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const s = decoder.decode(value, { stream: true });
      text += s;
      buf += s;
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        const ev = { data, at: Date.now() - t0 };
        events.push(ev);
        opts.onEvent?.(ev, events);
      }
    }
  } catch (e) {
    if (!opts.signal?.aborted) throw e;
  }
  const json = events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
  return { status: res.status, headers: res.headers, events, json, text };
}
