import { getPath } from './attributes';
import { isObject, type Loose } from './values';

/** A tool definition in OpenAI's chat format, the one reading of `attributes.tools`. */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: unknown };
}

function definition(name: unknown, description: unknown, parameters: unknown): ToolDefinition | null {
  if (typeof name !== 'string' || name === '') return null;
  const fn: ToolDefinition['function'] = { name };
  if (typeof description === 'string' && description !== '') fn.description = description;
  if (parameters !== undefined && parameters !== null) fn.parameters = parameters;
  return { type: 'function', function: fn };
}

/** An OpenAI-style `{type: function, function: {…}}`, a flat `{name, description, parameters}`, or a JSON schema string thereof. */
function fromAny(v: unknown): ToolDefinition | null {
  let t = v;
  if (typeof t === 'string') {
    try {
      t = JSON.parse(t);
    } catch {
      return null;
    }
  }
  if (!isObject(t)) return null;
  const fn = isObject(t.function) ? t.function : t;
  return definition(fn.name, fn.description, fn.parameters ?? fn.input_schema ?? fn.inputSchema);
}

const defined = (list: (ToolDefinition | null)[]): ToolDefinition[] | null => {
  const out = list.filter((t): t is ToolDefinition => t !== null);
  return out.length > 0 ? out : null;
};

/**
 * The tools offered to the model: OpenInference `llm.tools[].tool.json_schema`, GenAI
 * `gen_ai.tool.definitions`, OpenLLMetry `llm.request.functions`. Null when none.
 */
export function toolDefinitions(tree: Loose): ToolDefinition[] | null {
  const oi = getPath(tree, 'llm.tools');
  if (Array.isArray(oi)) return defined(oi.map((t) => fromAny(isObject(t) && isObject(t.tool) ? t.tool.json_schema : t)));
  const genai = getPath(tree, 'gen_ai.tool.definitions');
  if (Array.isArray(genai)) return defined(genai.map(fromAny));
  const functions = getPath(tree, 'llm.request.functions');
  if (Array.isArray(functions)) return defined(functions.map(fromAny));
  // The Vercel AI SDK: `ai.prompt.tools`, each a JSON string `{type, name, description, inputSchema}`.
  const ai = getPath(tree, 'ai.prompt.tools');
  if (Array.isArray(ai)) return defined(ai.map(fromAny));
  return null;
}

/**
 * The tool a tool span ran: OpenInference `tool.name`/`tool.description`/`tool.parameters`
 * (and `tool_call.id`), GenAI `gen_ai.tool.name`/`gen_ai.tool.call.id` on execute_tool spans, the
 * AI SDK's `ai.toolCall.name`/`ai.toolCall.id`.
 */
export function toolOfSpan(tree: Loose): Loose | null {
  const out: Loose = {};
  const set = (k: string, v: unknown) => {
    if (v !== undefined && v !== null && v !== '') out[k] = v;
  };
  set(
    'name',
    getPath(tree, 'gen_ai.tool.name') ??
      getPath(tree, 'tool.name') ??
      getPath(tree, 'tool_call.function.name') ??
      getPath(tree, 'ai.toolCall.name'),
  );
  set('call_id', getPath(tree, 'gen_ai.tool.call.id') ?? getPath(tree, 'tool_call.id') ?? getPath(tree, 'ai.toolCall.id'));
  set('description', getPath(tree, 'gen_ai.tool.description') ?? getPath(tree, 'tool.description'));
  set('type', getPath(tree, 'gen_ai.tool.type'));
  set('parameters', getPath(tree, 'tool.parameters') ?? getPath(tree, 'tool.json_schema'));
  return out.name !== undefined ? out : null;
}
