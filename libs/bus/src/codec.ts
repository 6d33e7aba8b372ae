import type { z } from 'zod';

/** A message value that cannot become an envelope; the consumer dead-letters it with `reason`. */
export class UndecodableMessageError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'UndecodableMessageError';
  }
}

/** How envelopes travel on Kafka: UTF-8 JSON, validated against the envelope schema on the way in. */
export interface EnvelopeCodec<T> {
  encode(value: T): Buffer;
  /** Throws UndecodableMessageError naming what is wrong. */
  decode(bytes: Buffer | null): T;
  /**
   * About the bytes a value takes on the wire, without encoding it: what the in-process bus
   * counts against WEFT_BUS_MAX_PENDING_BYTES. Absent: only the message count is bounded.
   */
  sizeOf?(value: T): number;
  /**
   * Several values as one message value. When present, the Kafka bus sends each publish's
   * values for one partition as one record (per-record costs — encoding, headers, the
   * broker's validation, the consumer's decoding — are paid per request, not per value).
   */
  encodeMany?(values: T[]): Buffer;
  /**
   * The values of a message value that `encodeMany` or `encode` wrote (required with
   * encodeMany). Throws UndecodableMessageError naming what is wrong (the whole record is
   * then dead-lettered).
   */
  decodeMany?(bytes: Buffer | null): T[];
  /**
   * The scope (a project) a message's key belongs to: a read of one scope waits only for that
   * scope's unstored writes (read-your-writes.ts). Absent, or undefined for a key: every read waits.
   */
  scopeOfKey?(key: string): string | undefined;
}

export function jsonEnvelopeCodec<T>(schema: z.ZodType<T>, sizeOf?: (value: T) => number): EnvelopeCodec<T> {
  return {
    ...(sizeOf ? { sizeOf } : {}),
    encode: (value) => Buffer.from(JSON.stringify(value), 'utf8'),
    decode(bytes) {
      if (!bytes || bytes.length === 0) throw new UndecodableMessageError('empty message value');
      let json: unknown;
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch (e) {
        throw new UndecodableMessageError(`not JSON: ${(e as Error).message}`);
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const field = issue.path.join('.') || '(envelope)';
        throw new UndecodableMessageError(`invalid envelope at ${field}: ${issue.message}`);
      }
      return parsed.data;
    },
  };
}
