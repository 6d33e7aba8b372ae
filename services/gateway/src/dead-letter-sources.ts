import { DEAD_LETTER_HEADERS, TOPICS, type DeadLetterEntry, type KafkaBus, type KafkaDeadLetterRecord, type LogBus } from '@weft/bus';
import { ApiError, microsToIso, nowMicros } from '@weft/core';
import { firstDeadLetterActions, recordDeadLetterAction, type CallPartEnvelope } from '@weft/ingest';
import type { Store } from '@weft/store';

/** A dead letter as the API shows it: the bus's entry, its values (null: they cannot be decoded, with why), where it is in Kafka. */
export interface DeadLetterView extends DeadLetterEntry {
  partition?: number;
  offset?: number;
}
export interface DeadLetterWithPayload extends DeadLetterView {
  payload: CallPartEnvelope[] | null;
  /** Why the values cannot be decoded (a dead letter of an undecodable record). */
  undecodable?: string;
}

/**
 * Where a process's dead letters are — the all-in-one's ingest log, or the Kafka dead-letter
 * topic — behind the one set of admin endpoints and `weft dead-letters`.
 */
export interface DeadLetterSource {
  list(): Promise<DeadLetterView[]>;
  get(seq: number): Promise<DeadLetterWithPayload | null>;
  /** Publishes a pending one's values again through the bus's normal path (once); `replayed` the values published now, if any. */
  replay(seq: number, by: string): Promise<{ entry: DeadLetterView; replayed: CallPartEnvelope[] } | null>;
  discard(seq: number, by: string): Promise<DeadLetterView | null>;
}

/** The ingest log's (all-in-one): its own dead-letter log, with what became of each kept beside it. */
export function ingestLogDeadLetters(bus: LogBus<CallPartEnvelope>): DeadLetterSource {
  const letters = bus.deadLetters;
  return {
    list: async () => letters.list(),
    get: async (seq) => letters.get(seq),
    replay: async (seq) => {
      const before = letters.get(seq);
      const entry = await bus.replayDeadLetter(seq);
      if (!entry) return null;
      return { entry, replayed: before?.state === 'pending' && entry.state === 'replayed' ? before.payload : [] };
    },
    discard: async (seq) => letters.discard(seq),
  };
}

/** A Kafka record's number in the list: its partition and offset in one integer (partition × 2³² + offset). */
const seqOf = (r: { partition: number; offset: number }) => r.partition * 2 ** 32 + r.offset;
const placeOf = (seq: number) => ({ partition: Math.floor(seq / 2 ** 32), offset: seq % 2 ** 32 });

/**
 * The Kafka dead-letter topic's (distributed mode): its records, read by a consumer of their own
 * (KafkaDeadLetterReader), each with the reason, origin topic, partition and offset the writer
 * put in its headers; what became of each (the topic is append-only) in the store's
 * dead_letter_actions (migration 150; libs/ingest dead-letter-actions.ts), shared by every
 * gateway. A replay publishes the record's values to the topic they came from, by the bus's
 * normal publish, keyed as they were.
 */
export function kafkaDeadLetters(bus: KafkaBus<CallPartEnvelope>, store: Store): DeadLetterSource {
  const reader = bus.deadLetterReader();
  const dlq = bus.physical(TOPICS.deadLetter);
  const letterOf = (r: { partition: number; offset: number }) => `${dlq}/${r.partition}/${r.offset}`;

  const actions = async (letters: string[]): Promise<Map<string, { action: 'replayed' | 'discarded'; at: string }>> => {
    if (letters.length === 0) return new Map();
    const rows = await firstDeadLetterActions(store, letters);
    return new Map(rows.map((r) => [r.letter, { action: r.first_action, at: new Date(`${r.first_at.replace(' ', 'T')}Z`).toISOString() }]));
  };
  const record = async (action: 'replayed' | 'discarded', r: KafkaDeadLetterRecord, by: string) => {
    await recordDeadLetterAction(store, letterOf(r), action, by, microsToIso(nowMicros()));
  };
  const decode = (r: KafkaDeadLetterRecord): { payload: CallPartEnvelope[] | null; undecodable?: string } => {
    try {
      const codec = bus.codec;
      return { payload: codec.decodeMany ? codec.decodeMany(r.value) : [codec.decode(r.value)] };
    } catch (e) {
      return { payload: null, undecodable: (e as Error).message };
    }
  };
  const view = (r: KafkaDeadLetterRecord, handled: { action: 'replayed' | 'discarded'; at: string } | undefined): DeadLetterView => {
    const origin = r.headers[DEAD_LETTER_HEADERS.topic] ?? '';
    return {
      seq: seqOf(r),
      partition: r.partition,
      offset: r.offset,
      topic: bus.logical(origin) ?? origin,
      reason: r.headers[DEAD_LETTER_HEADERS.reason] ?? '',
      values: decode(r).payload?.length ?? 0,
      bytes: r.value?.length ?? 0,
      state: handled?.action ?? 'pending',
      handled_at: handled?.at ?? null,
    };
  };
  const find = async (seq: number) => {
    const { partition, offset } = placeOf(seq);
    const r = (await reader.read()).find((x) => x.partition === partition && x.offset === offset);
    if (!r) return null;
    return { r, handled: (await actions([letterOf(r)])).get(letterOf(r)) };
  };

  return {
    async list() {
      const records = await reader.read();
      const handled = await actions(records.map(letterOf));
      return records.map((r) => view(r, handled.get(letterOf(r))));
    },
    async get(seq) {
      const found = await find(seq);
      return found && { ...view(found.r, found.handled), ...decode(found.r) };
    },
    async replay(seq, by) {
      const found = await find(seq);
      if (!found) return null;
      if (found.handled) return { entry: view(found.r, found.handled), replayed: [] };
      const { payload, undecodable } = decode(found.r);
      if (!payload)
        throw new ApiError(422, `dead letter ${seq} cannot be replayed: its value does not decode (${undecodable}); discard it`, {
          field: 'seq',
        });
      const topic = bus.logical(found.r.headers[DEAD_LETTER_HEADERS.topic] ?? '') ?? TOPICS.callParts;
      await bus.publish(
        topic,
        payload.map((value) => ({ key: found.r.key ?? '', value })),
      );
      await record('replayed', found.r, by);
      // The first action recorded is what became of it (another gateway's replay may have come first).
      const handled = (await actions([letterOf(found.r)])).get(letterOf(found.r));
      return { entry: view(found.r, handled), replayed: handled?.action === 'replayed' ? payload : [] };
    },
    async discard(seq, by) {
      const found = await find(seq);
      if (!found) return null;
      if (!found.handled) await record('discarded', found.r, by);
      return view(found.r, (await actions([letterOf(found.r)])).get(letterOf(found.r)));
    },
  };
}
