import type { Call } from '@weft/api';
import { conversationFromEvents, GENAI_MESSAGE_EVENTS } from '@weft/otlp';
import { projectHasSpanEvents, spanEvents } from '@weft/query';
import type { Store } from '@weft/store';

/**
 * GenAI log events joined to their span's call at read time: an OTLP call without
 * `inputs.messages` / `output.choices` (an instrumentation in event_only mode puts the content in
 * log records, not on the span) gets them from its project's `otel_logs` events with the call's
 * trace and span ids. Reading, not writing, makes the join exact whichever of span and events
 * arrived first, and never across projects (the events are looked up in the call's own project).
 */

const EVENTS = [...GENAI_MESSAGE_EVENTS];
/** Calls are filled a page at a time: one events lookup per page, not per call. */
const PAGE_SIZE = 100;

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * Whether the project has any GenAI message event: when it has none (the common case), calls are
 * streamed as ClickHouse builds their lines, with nothing to join. One indexed `LIMIT 1` read.
 */
export async function projectHasGenAiEvents(store: Store, projectId: string): Promise<boolean> {
  return projectHasSpanEvents(store, projectId, EVENTS);
}

/** An OTLP span's call missing a half of its conversation. */
const lacksConversation = (c: Call): boolean =>
  isObj(c.attributes) && isObj(c.attributes.otel_span) && (!isObj(c.inputs) || !('messages' in c.inputs) || !hasChoices(c.output));
const hasChoices = (output: unknown): boolean => isObj(output) && 'choices' in output;

/** Fills the missing `inputs.messages` / `output.choices` of `calls` (in place) from their events. */
export async function fillFromGenAiEvents(store: Store, projectId: string, calls: Call[]): Promise<void> {
  const wanting = calls.filter(lacksConversation);
  if (wanting.length === 0) return;
  const rows = await spanEvents(
    store,
    projectId,
    wanting.map((c) => c.id),
    EVENTS,
  );
  const bySpan = new Map<string, typeof rows>();
  for (const r of rows) {
    const key = `${r.trace_id}/${r.span_id}`;
    const list = bySpan.get(key);
    if (list) list.push(r);
    else bySpan.set(key, [r]);
  }
  for (const call of wanting) {
    const events = bySpan.get(`${call.trace_id}/${call.id}`);
    const conversation = events ? conversationFromEvents(events) : null;
    if (!conversation) continue;
    const inputs = isObj(call.inputs) ? call.inputs : {};
    if (conversation.messages && !('messages' in inputs)) call.inputs = { ...inputs, messages: conversation.messages };
    if (conversation.choices && !hasChoices(call.output)) {
      call.output = isObj(call.output) ? { ...call.output, choices: conversation.choices } : { choices: conversation.choices };
    }
  }
}

/** `calls` with their conversations filled from GenAI events, a page at a time. */
export async function* withGenAiEvents(store: Store, projectId: string, calls: AsyncIterable<Call>): AsyncGenerator<Call> {
  let page: Call[] = [];
  for await (const call of calls) {
    page.push(call);
    if (page.length >= PAGE_SIZE) {
      await fillFromGenAiEvents(store, projectId, page);
      yield* page;
      page = [];
    }
  }
  if (page.length > 0) {
    await fillFromGenAiEvents(store, projectId, page);
    yield* page;
  }
}
