import type { ServerWorkCommand } from './commands';

/**
 * `weft monitors`, `weft alerts` and `weft evaluate`: the server's work on traces, through a running server's
 * HTTP API (the same routes the Weave SDK and the UI use). Results are JSON on stdout; a run
 * followed with --wait shows its progress on stderr and exits 1 unless it completes.
 */
export async function runServerWork(cmd: ServerWorkCommand, progress: NodeJS.WriteStream = process.stderr): Promise<unknown> {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(new URL(path, cmd.url), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(cmd.apiKey ? { authorization: `Basic ${Buffer.from(`api:${cmd.apiKey}`).toString('base64')}` } : {}),
      },
      body: JSON.stringify(body),
    });
    const parsed = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${res.status}: ${String(parsed.reason ?? parsed.message ?? res.statusText)}`);
    return parsed;
  };
  const project_id = cmd.project;
  switch (cmd.action) {
    case 'monitors list': {
      const { objs } = (await post('/objs/query', {
        project_id,
        filter: { base_object_classes: ['Monitor'], latest_only: true },
      })) as { objs: { object_id: string; digest: string; val: Record<string, unknown> }[] };
      return {
        monitors: objs.map((o) => ({
          name: o.object_id,
          ref: `weave:///${project_id}/object/${o.object_id}:${o.digest}`,
          active: o.val.active === true,
          op_names: o.val.op_names ?? [],
          sampling_rate: o.val.sampling_rate ?? 1,
          scorers: o.val.scorers ?? [],
          scorer_debounce_config: o.val.scorer_debounce_config ?? null,
        })),
      };
    }
    case 'monitors activate':
    case 'monitors deactivate': {
      // As the SDK's Monitor.activate(): the latest version published again with `active` set.
      const name = cmd.args[0]!;
      const { obj } = (await post('/obj/read', { project_id, object_id: name, digest: 'latest' })) as {
        obj: { val: Record<string, unknown>; base_object_class: string | null };
      };
      if (obj.base_object_class !== 'Monitor' && obj.val._class_name !== 'Monitor') throw new Error(`${name} is not a Monitor`);
      const active = cmd.action === 'monitors activate';
      const { digest } = (await post('/obj/create', { obj: { project_id, object_id: name, val: { ...obj.val, active } } })) as {
        digest: string;
      };
      return { name, active, ref: `weave:///${project_id}/object/${name}:${digest}` };
    }
    case 'alerts list':
      return post('/alerts/list', { project_id });
    case 'alerts events':
      return post('/alerts/events/query', { project_id, ...cmd.body });
    case 'alerts test':
      return post('/alerts/channels/test', { project_id, channel_id: cmd.args[0] });
    case 'evaluate run':
    case 'evaluate replay': {
      const started =
        cmd.action === 'evaluate run'
          ? await post('/evaluations/evaluate_model', { project_id, ...cmd.body })
          : await post('/evaluations/replay', { project_id, ...cmd.body });
      if (!cmd.wait) return started;
      const status = await follow(post, project_id, String(started.call_id), progress);
      return { ...started, status };
    }
    case 'evaluate status': {
      const { status } = (await post('/evaluations/status', { project_id, call_id: cmd.args[0] })) as { status: unknown };
      return { call_id: cmd.args[0], status };
    }
    case 'evaluate cancel': {
      const { status } = (await post('/evaluations/cancel', { project_id, call_id: cmd.args[0] })) as { status: unknown };
      return { call_id: cmd.args[0], status };
    }
  }
}

/** Polls a run's status until it is no longer running, its rows shown on stderr. */
async function follow(
  post: (path: string, body: unknown) => Promise<Record<string, unknown>>,
  project_id: string,
  call_id: string,
  progress: NodeJS.WriteStream,
): Promise<{ code: string }> {
  for (;;) {
    const { status } = (await post('/evaluations/status', { project_id, call_id })) as {
      status: { code: string; completed_rows?: number; total_rows?: number };
    };
    if (status.code !== 'running') {
      progress.write(`\revaluation ${call_id}: ${status.code}\n`);
      if (status.code !== 'complete') process.exitCode = 1;
      return status;
    }
    progress.write(`\revaluation ${call_id}: ${status.completed_rows} / ${status.total_rows} rows`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
