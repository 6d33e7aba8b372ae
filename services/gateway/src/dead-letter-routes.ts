import type { FastifyInstance } from 'fastify';
import { LogBus, type Bus } from '@weft/bus';
import { ApiError, delivery, forbidden, type Caller } from '@weft/core';
import { addRoute, type Authenticator } from '@weft/http';
import { callHalves, callPartFacts, type CallPartEnvelope } from '@weft/ingest';
import { decodeCallPartRowBinary } from '@weft/store';

/**
 * The ingest log's dead letters through the API (admin keys): list, read, replay (through the
 * bus's normal publish, so the writer stores the parts as any write, idempotently: parts merge
 * by call id, and a dead letter is replayed once) or discard. Only the all-in-one's ingest log
 * keeps them here; with Kafka they are in the dead-letter topic (docs/operations.md).
 */
export function deadLetterRoutes(app: FastifyInstance, auth: Authenticator, bus: Bus<CallPartEnvelope>): void {
  const logBus = bus instanceof LogBus ? (bus as LogBus<CallPartEnvelope>) : null;
  const letters = (caller: Caller) => {
    if (!caller.isAdmin) throw forbidden('dead letters need an admin key');
    if (!logBus)
      throw new ApiError(
        501,
        'this process keeps no ingest log dead letters (WEFT_ACK_AFTER=log only; with Kafka, read the dead-letter topic)',
      );
    return logBus.deadLetters;
  };
  const missing = (seq: number) => new ApiError(404, `no dead letter ${seq}`, { field: 'seq' });

  addRoute(app, auth, 'deadLettersList', async (body, { caller }) => ({
    dead_letters: letters(caller)
      .list()
      .filter((d) => !body.state || d.state === body.state),
  }));
  addRoute(app, auth, 'deadLetterRead', async (body, { caller }) => {
    const letter = letters(caller).get(body.seq);
    if (!letter) throw missing(body.seq);
    return { ...letter, payload: letter.payload.map(readablePart) };
  });
  addRoute(app, auth, 'deadLetterReplay', async (body, { caller }) => {
    const before = letters(caller).get(body.seq);
    const entry = await logBus!.replayDeadLetter(body.seq);
    if (!entry) throw missing(body.seq);
    if (before?.state === 'pending' && entry.state === 'replayed') countReplayed(before.payload);
    return entry;
  });
  addRoute(app, auth, 'deadLetterDiscard', async (body, { caller }) => {
    const entry = letters(caller).discard(body.seq);
    if (!entry) throw missing(body.seq);
    return entry;
  });
}

/** A replayed dead letter's parts in the delivery counts (they wait to be stored again). */
function countReplayed(parts: readonly CallPartEnvelope[]): void {
  for (const part of parts) {
    const facts = callPartFacts(part);
    delivery.replayed(facts.project_id, (part.v !== 2 && part.entrance) || 'unknown', callHalves(facts));
  }
}

/** A call part as the row it was to be: decoded from RowBinary; an old TabSeparated part as its text. */
function readablePart(envelope: CallPartEnvelope): unknown {
  if (envelope.v === 1) return envelope.row;
  if (envelope.v === 4) return decodeCallPartRowBinary(envelope.bytes);
  return { format: 'TabSeparated', text: Buffer.from(envelope.bytes).toString('utf8') };
}
