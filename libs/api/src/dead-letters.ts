import { z } from 'zod';
import type { RouteSpec } from './spec';

/** The ingest log's dead letters (admin keys): values the store refused for good, to list, read, replay or discard. */
export const deadLettersListReq = z.object({
  state: z.enum(['pending', 'replayed', 'discarded']).nullish().describe('only those in this state; absent: all'),
});
export const deadLetterReq = z.object({ seq: z.number().int().min(0).describe('the dead letter, by its number in the list') });

export const deadLetterEntry = z.object({
  seq: z.number().int().describe('its number (Kafka: partition × 2³² + offset in the dead-letter topic)'),
  partition: z.number().int().optional().describe('Kafka: its partition in the dead-letter topic'),
  offset: z.number().int().optional().describe('Kafka: its offset there'),
  topic: z.string(),
  reason: z.string().describe('why the store refused it'),
  values: z.number().int(),
  bytes: z.number().int(),
  state: z.enum(['pending', 'replayed', 'discarded']),
  handled_at: z.string().nullable(),
});
export const deadLettersListRes = z.object({ dead_letters: z.array(deadLetterEntry) });
export const deadLetterRes = deadLetterEntry.extend({
  payload: z
    .array(z.unknown())
    .describe('its values: each call part as the row that was to be stored (`[{undecodable}]`: a value that does not decode, and why)'),
});

/** The bus's dead letters (the all-in-one's ingest log, or the Kafka dead-letter topic; admin keys): `weft dead-letters` calls these. */
export const deadLetterRouteSpecs = {
  deadLettersList: {
    path: '/admin/dead_letters/list',
    summary:
      "Admin keys: the bus's dead letters (the ingest log's or the Kafka dead-letter topic's: values the store refused for good), with why and what became of them",
    auth: 'basic',
    service: 'gateway',
    request: deadLettersListReq,
    response: deadLettersListRes,
    published: true,
  },
  deadLetterRead: {
    path: '/admin/dead_letters/read',
    summary: 'Admin keys: one dead letter with its values (each call part as the row that was to be stored)',
    auth: 'basic',
    service: 'gateway',
    request: deadLetterReq,
    response: deadLetterRes,
    published: true,
  },
  deadLetterReplay: {
    path: '/admin/dead_letters/replay',
    summary: 'Admin keys: publishes a dead letter again through the normal write path (once: a replayed one is left as it is)',
    auth: 'basic',
    service: 'gateway',
    request: deadLetterReq,
    response: deadLetterEntry,
    published: true,
  },
  deadLetterDiscard: {
    path: '/admin/dead_letters/discard',
    summary: 'Admin keys: marks a dead letter discarded (it is no longer pending)',
    auth: 'basic',
    service: 'gateway',
    request: deadLetterReq,
    response: deadLetterEntry,
    published: true,
  },
} as const satisfies Record<string, RouteSpec>;
