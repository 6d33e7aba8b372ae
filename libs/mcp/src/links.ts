/**
 * Links into weft's web UI (services/ui: hash routes, `#/p/<entity>/<project>/<view>…`), so every
 * id an answer names can be opened by the person reading along. The base is the URL the client
 * reached weft at (its Host on /mcp, `--url` for `weft mcp`).
 */
export class UiLinks {
  private readonly base: string;

  constructor(base: string) {
    this.base = base.replace(/\/+$/, '');
  }

  private at(projectId: string, view: string[], params: Record<string, string> = {}): string {
    const [entity, project] = projectId.split('/');
    const path = ['p', entity ?? '', project ?? '', ...view].map(encodeURIComponent).join('/');
    const qs = new URLSearchParams(params).toString();
    return `${this.base}/#/${path}${qs ? `?${qs}` : ''}`;
  }

  project(projectId: string): string {
    return this.at(projectId, ['calls']);
  }
  call(projectId: string, callId: string): string {
    return this.at(projectId, ['call', callId]);
  }
  trace(projectId: string, traceId: string, callId?: string): string {
    return this.at(projectId, ['trace', traceId], callId ? { call: callId } : {});
  }
  thread(projectId: string, threadId: string): string {
    return this.at(projectId, ['threads', threadId]);
  }
  object(projectId: string, objectId: string, digest?: string): string {
    return this.at(projectId, ['objects', objectId], digest ? { v: digest } : {});
  }
  evaluations(projectId: string): string {
    return this.at(projectId, ['evaluations']);
  }
  compare(projectId: string, callIds: string[]): string {
    return this.at(projectId, ['evaluations', 'compare'], { runs: callIds.join(',') });
  }
  analytics(projectId: string): string {
    return this.at(projectId, ['analytics']);
  }
}
