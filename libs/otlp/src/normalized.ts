import { inputMessages, outputChoices } from './messages';
import { retrievalDocuments } from './retrieval';
import { toolDefinitions, toolOfSpan } from './tools';
import { getOwn, isObject, setOwn, type Loose } from './values';

/**
 * Beside the reference's stored shape (`{"input.value": …}`, `{"gen_ai.output.messages": …}`),
 * one reading every convention shares: `inputs.messages` (OpenAI chat), `output.choices`,
 * `output.documents`, `attributes.tools` (OpenAI tool definitions) and `attributes.tool` (the
 * tool a tool span ran). Keys the span's own values already use are left as they are.
 */
export function addNormalizedReading(
  tree: Loose,
  inputs: Record<string, unknown>,
  output: unknown,
  attributes: Record<string, unknown>,
): { inputs: Record<string, unknown>; output: unknown; attributes: Record<string, unknown> } {
  const messages = inputMessages(tree);
  if (messages && getOwn(inputs, 'messages') === undefined) {
    inputs = { ...inputs };
    setOwn(inputs, 'messages', messages);
  }
  const choices = outputChoices(tree);
  const documents = retrievalDocuments(tree);
  if ((choices || documents) && (output === null || isObject(output))) {
    const out: Loose = output === null ? {} : { ...output };
    if (choices && getOwn(out, 'choices') === undefined) setOwn(out, 'choices', choices);
    if (documents && getOwn(out, 'documents') === undefined) setOwn(out, 'documents', documents);
    output = out;
  }
  const tools = toolDefinitions(tree);
  const tool = toolOfSpan(tree);
  if (tools || tool) {
    attributes = { ...attributes };
    if (tools) attributes.tools = tools;
    if (tool) attributes.tool = tool;
  }
  return { inputs, output, attributes };
}
