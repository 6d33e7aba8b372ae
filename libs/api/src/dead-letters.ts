import { z } from 'zod';

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
