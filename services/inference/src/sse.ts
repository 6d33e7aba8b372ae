import type { ServerResponse } from 'node:http';
import { writeOrWait } from '@weft/http';

/**
 * Server-Sent Events out to a client, written as produced (no buffering), waiting for the
 * socket to drain under back-pressure (writeOrWait, as every streamed response). `closed` turns true when the client goes away.
 */
export class SseWriter {
  closed = false;

  constructor(private readonly res: ServerResponse) {
    res.on('close', () => {
      if (!res.writableFinished) this.closed = true;
    });
  }

  start(headers: Record<string, string>): void {
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    this.res.flushHeaders();
  }

  async data(payload: unknown): Promise<void> {
    await this.write(`data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`);
  }

  /** A named event (`event: <name>`), as the Responses API streams them. */
  async event(name: string, payload: unknown): Promise<void> {
    await this.write(`event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  private async write(text: string): Promise<void> {
    if (!this.closed) await writeOrWait(this.res, text);
  }

  end(): void {
    if (!this.closed) this.res.end();
  }
}
