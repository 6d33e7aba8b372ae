import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ArgumentError } from '../cursor';
import { WeftApiError } from '../weft-api';
import { readCall } from './calls';
import { answer, projectIdArg, type ToolContext } from './shared';

const ANNOTATION_PREFIX = 'wandb.annotation.';

/** An AnnotationSpec's ref and name: a ref as given, a name resolved to its latest version. */
async function annotationSpec(ctx: ToolContext, projectId: string, spec: string): Promise<{ ref: string; name: string }> {
  if (spec.startsWith('weave:///')) {
    const m = /^weave:\/\/\/[^/]+\/[^/]+\/object\/([^:/]+):[^/]+$/.exec(spec);
    if (!m) throw new ArgumentError('annotation_spec', `not an object ref: ${spec}`);
    return { ref: spec, name: m[1]! };
  }
  try {
    const { obj } = await ctx.api.post<{ obj: { digest: string; base_object_class: string | null } }>('/obj/read', {
      project_id: projectId,
      object_id: spec,
      digest: 'latest',
    });
    if (obj.base_object_class !== 'AnnotationSpec') throw new ArgumentError('annotation_spec', `${spec} is not an AnnotationSpec`);
    return { ref: `weave:///${projectId}/object/${spec}:${obj.digest}`, name: spec };
  } catch (e) {
    if (e instanceof WeftApiError && e.status === 404)
      throw new ArgumentError('annotation_spec', `no AnnotationSpec ${spec} in ${projectId}`);
    throw e;
  }
}

export function registerFeedbackTools(server: McpServer, ctx: ToolContext): void {
  const args = {
    project_id: projectIdArg,
    call_id: z.string().min(1).describe('the call the feedback is on'),
    note: z.string().min(1).max(1024).optional().describe('a note (text)'),
    emoji: z.string().min(1).max(32).optional().describe('a reaction: one emoji, e.g. 👍'),
    annotation_spec: z
      .string()
      .min(1)
      .optional()
      .describe("a score: the name (or ref) of one of the project's AnnotationSpecs; `value` must fit its schema"),
    value: z.union([z.string(), z.number(), z.boolean()]).optional().describe('the score given with annotation_spec'),
  };
  server.registerTool(
    'add_feedback',
    {
      title: 'Add feedback to a call',
      description:
        'Add one piece of feedback to an existing call, as the Weave SDK and UI do: a `note`, a reaction (`emoji`), or a score ' +
        '(`annotation_spec` and `value`, checked against that AnnotationSpec). Exactly one kind per call. Writes.',
      inputSchema: args,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    async (a) => {
      const kinds = [a.note !== undefined, a.emoji !== undefined, a.annotation_spec !== undefined].filter(Boolean).length;
      if (kinds !== 1) throw new ArgumentError('note', 'give exactly one of note, emoji or annotation_spec (with value)');
      if (a.annotation_spec !== undefined && a.value === undefined) throw new ArgumentError('value', 'a score needs a value');
      if (a.annotation_spec === undefined && a.value !== undefined) throw new ArgumentError('value', 'value goes with annotation_spec');
      // The call must exist (feedback on no call would be stored all the same).
      await readCall(ctx, a.project_id, a.call_id);
      let feedback: { feedback_type: string; payload: Record<string, unknown>; annotation_ref?: string };
      if (a.note !== undefined) feedback = { feedback_type: 'wandb.note.1', payload: { note: a.note } };
      else if (a.emoji !== undefined) feedback = { feedback_type: 'wandb.reaction.1', payload: { emoji: a.emoji } };
      else {
        const spec = await annotationSpec(ctx, a.project_id, a.annotation_spec!);
        feedback = { feedback_type: `${ANNOTATION_PREFIX}${spec.name}`, payload: { value: a.value }, annotation_ref: spec.ref };
      }
      const written = await ctx.api.post<{ id: string; created_at: string; payload: Record<string, unknown> }>('/feedback/create', {
        project_id: a.project_id,
        svc_ref: `weave:///${a.project_id}/call/${a.call_id}`,
        ...feedback,
      });
      return answer({
        feedback_id: written.id,
        call_id: a.call_id,
        feedback_type: feedback.feedback_type,
        payload: written.payload,
        created_at: written.created_at,
        url: ctx.links.call(a.project_id, a.call_id),
      });
    },
  );
}
