import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { budgetNote, fitPage } from '../budget';
import { decodeCursor, encodeCursor } from '../cursor';
import { answer, cursorArg, limitArg, maxCharsArg, type ToolContext } from './shared';

interface ProjectSummary {
  project_id: string;
  call_count: number;
  object_count: number;
  last_activity: string | null;
}

export function registerProjectTools(server: McpServer, ctx: ToolContext): void {
  const args = {
    entity: z.string().min(1).optional().describe("only this entity's projects (default: every entity your key may use)"),
    limit: limitArg(50, 1000, 'projects'),
    cursor: cursorArg,
    max_chars: maxCharsArg,
  };
  server.registerTool(
    'list_projects',
    {
      title: 'List projects',
      description:
        'The projects your key can see, most recently active first, with their call and object counts and last activity. ' +
        'Start here: every other tool takes a project_id ("entity/project") from this list.',
      inputSchema: args,
      annotations: { readOnlyHint: true },
    },
    async (a) => {
      const offset = decodeCursor('list_projects', a, a.cursor);
      // /projects/list has no offset: read up to the page's end, answer the page.
      const { projects } = await ctx.api.post<{ projects: ProjectSummary[] }>('/projects/list', {
        ...(a.entity ? { entity: a.entity } : {}),
        limit: Math.min(10_000, offset + a.limit + 1),
      });
      const page = projects.slice(offset, offset + a.limit).map((p) => ({ ...p, url: ctx.links.project(p.project_id) }));
      // The total is known when the read stopped short of its bound.
      const head = projects.length <= offset + a.limit ? { total: projects.length } : {};
      return answer(
        fitPage(head, page, a.max_chars, (n) => {
          const more = offset + n < projects.length;
          return {
            ...head,
            projects: page.slice(0, n),
            ...(more ? { next_cursor: encodeCursor('list_projects', a, offset + n) } : {}),
            budget: budgetNote(a.max_chars, false),
          };
        }),
      );
    },
  );
}
