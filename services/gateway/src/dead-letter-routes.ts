import type { FastifyInstance } from 'fastify';
import { KafkaBus, LogBus, type Bus } from '@weft/bus';
import { ApiError, delivery, forbidden, microsToClickHouse, type Caller } from '@weft/core';
import { addRoute, type Authenticator } from '@weft/http';
import { callHalves, callPartFacts, type CallPartEnvelope } from '@weft/ingest';
import { decodeCallPartRowBinary, type CallPartRow, type Store } from '@weft/store';
import { ingestLogDeadLetters, kafkaDeadLetters, type DeadLetterSource } from './dead-letter-sources';

export interface DeadLetterRouteDeps {
  auth: Authenticator;
  /** The bus whose dead letters these are (the ingest log's, Kafka's; none elsewhere). */
  bus: Bus<CallPartEnvelope>;
  store: Store;
}

/**
 * The bus's dead letters through the API (admin keys): list, read, replay (through the bus's
 * normal publish, so the writer stores the parts as any write, idempotently: parts merge by call
 * id, and a dead letter is replayed once) or discard. The all-in-one's are in its ingest log,
 * the distributed mode's in the Kafka dead-letter topic (dead-letter-sources.ts).
 */
export async function deadLetterRoutes(app: FastifyInstance, deps: DeadLetterRouteDeps): Promise<void> {
  const { auth, bus, store } = deps;
  const source: DeadLetterSource | null =
    bus instanceof LogBus
      ? ingestLogDeadLetters(bus as LogBus<CallPartEnvelope>)
      : bus instanceof KafkaBus
        ? kafkaDeadLetters(bus as KafkaBus<CallPartEnvelope>, store)
        : null;
  const letters = (caller: Caller): DeadLetterSource => {
    if (!caller.isAdmin) throw forbidden('dead letters need an admin key');
    if (!source)
      throw new ApiError(501, 'this process keeps no dead letters (WEFT_ACK_AFTER=insert refuses what the store refuses instead)');
    return source;
  };
  const missing = (seq: number) => new ApiError(404, `no dead letter ${seq}`, { field: 'seq' });

  addRoute(app, auth, 'deadLettersList', async (body, { caller }) => ({
    dead_letters: (await letters(caller).list()).filter((d) => !body.state || d.state === body.state),
  }));
  addRoute(app, auth, 'deadLetterRead', async (body, { caller }) => {
    const letter = await letters(caller).get(body.seq);
    if (!letter) throw missing(body.seq);
    // A record that does not decode (an envelope version not read) shows why instead of its values.
    const readable = letter.payload && letter.undecodable === undefined;
    return { ...letter, payload: readable ? letter.payload!.map(readablePart) : [{ undecodable: letter.undecodable }] };
  });
  addRoute(app, auth, 'deadLetterReplay', async (body, { caller }) => {
    const done = await letters(caller).replay(body.seq, caller.userId);
    if (!done) throw missing(body.seq);
    countReplayed(done.replayed);
    return done.entry;
  });
  addRoute(app, auth, 'deadLetterDiscard', async (body, { caller }) => {
    const entry = await letters(caller).discard(body.seq, caller.userId);
    if (!entry) throw missing(body.seq);
    return entry;
  });
}

/** A replayed dead letter's parts in the delivery counts (they wait to be stored again). */
function countReplayed(parts: readonly CallPartEnvelope[]): void {
  for (const part of parts) {
    const facts = callPartFacts(part);
    delivery.replayed(facts.project_id, part.entrance ?? 'unknown', callHalves(facts));
  }
}

/** A call part as the row it was to be (decoded from RowBinary), its times as the engine prints them. */
function readablePart(envelope: CallPartEnvelope): unknown {
  const row = envelope.v === 1 ? envelope.row : decodeCallPartRowBinary(envelope.bytes);
  return { ...row, ...Object.fromEntries(TIMES.map((c) => [c, row[c] == null ? row[c] : microsToClickHouse(row[c])])) };
}

const TIMES = ['started_at', 'ended_at', 'deleted_at', 'created_at'] as const satisfies readonly (keyof CallPartRow)[];
