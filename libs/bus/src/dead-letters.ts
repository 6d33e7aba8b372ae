import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalLog } from './local-log';

/** A dead letter as listed: where it came from, why, and what became of it. */
export interface DeadLetterEntry {
  /** Its number in the dead-letter log (what inspect, replay and discard name). */
  seq: number;
  topic: string;
  reason: string;
  /** Values it holds (a refused value is dead-lettered alone: one). */
  values: number;
  bytes: number;
  state: 'pending' | 'replayed' | 'discarded';
  /** When it was replayed or discarded (ISO), else null. */
  handled_at: string | null;
}

export interface DeadLetter<T> extends DeadLetterEntry {
  /** Its values; none when the record does not decode (`undecodable` says why). */
  payload: T[];
  undecodable?: string;
}

/** What replaying needs of the bus: a publish through its normal path (durable once it resolves). */
export type Republish<T> = (topic: string, values: T[]) => Promise<void>;

const HANDLED = 'handled.jsonl';

/**
 * The ingest log's dead letters (`<ingest log>/dead-letter`): values the store refused for good,
 * each a record `{"topic","reason"}\n` + the values as the topic's codec writes them. Listed,
 * inspected, replayed (published again through the bus's normal path, so the writer stores them
 * as any other write, or dead-letters them again) or discarded. A dead letter is handled once:
 * what became of it is appended to `handled.jsonl` beside the log (replaying one twice answers
 * what was done the first time, nothing is published again; call parts merge by id anyway).
 * Records stay in the log; the log is small, for what the store refused.
 */
export class DeadLetters<T> {
  private readonly handled = new Map<number, { action: 'replayed' | 'discarded'; at: string }>();

  constructor(
    readonly log: LocalLog,
    private readonly dir: string,
    private readonly codec: { encodeMany(values: T[]): Buffer; decodeMany(bytes: Buffer): T[] },
  ) {}

  static at<T>(dir: string, opts: { segmentBytes: number; fsync: boolean }, codec: DeadLetters<T>['codec']): DeadLetters<T> {
    return new DeadLetters(new LocalLog({ dir, segmentBytes: opts.segmentBytes, fsync: opts.fsync }), dir, codec);
  }

  open(): void {
    this.log.open();
    const file = join(this.dir, HANDLED);
    if (!existsSync(file)) return;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const h = JSON.parse(line) as { seq: number; action: 'replayed' | 'discarded'; at: string };
        this.handled.set(h.seq, { action: h.action, at: h.at });
      } catch {
        // A line cut by a kill: that action did not complete (a replay is then done again, harmlessly).
      }
    }
  }

  close(): void {
    this.log.close();
  }

  /** Dead-letters values of `topic` the store refused, with why. */
  async add(topic: string, reason: string, values: T[]): Promise<void> {
    const header = Buffer.from(`${JSON.stringify({ topic, reason })}\n`);
    await this.log.append([Buffer.concat([header, this.codec.encodeMany(values)])]);
  }

  /** Dead-letters a record of `topic` that does not decode (a value this version does not read), as it came. */
  async addUndecodable(topic: string, reason: string, record: Buffer): Promise<void> {
    const header = Buffer.from(`${JSON.stringify({ topic, reason })}\n`);
    await this.log.append([Buffer.concat([header, record])]);
  }

  list(): DeadLetterEntry[] {
    return this.log.read().map((r) => {
      const { payload, ...entry } = this.decode(r.seq, r.payload);
      void payload;
      return entry;
    });
  }

  /** One dead letter with its values, or null. */
  get(seq: number): DeadLetter<T> | null {
    const r = this.log.read().find((x) => x.seq === seq);
    return r ? this.decode(r.seq, r.payload) : null;
  }

  /** Publishes a pending dead letter's values again through `republish`; a handled one is left as it is. */
  async replay(seq: number, republish: Republish<T>): Promise<DeadLetterEntry | null> {
    const letter = this.get(seq);
    if (!letter || letter.state !== 'pending') return letter && strip(letter);
    // What does not decode cannot be published again; it stays pending (discard it).
    if (letter.undecodable !== undefined) return strip(letter);
    await republish(letter.topic, letter.payload);
    return strip(this.mark(letter, 'replayed'));
  }

  discard(seq: number): DeadLetterEntry | null {
    const letter = this.get(seq);
    if (!letter || letter.state !== 'pending') return letter && strip(letter);
    return strip(this.mark(letter, 'discarded'));
  }

  private mark(letter: DeadLetter<T>, action: 'replayed' | 'discarded'): DeadLetter<T> {
    const at = new Date().toISOString();
    appendFileSync(join(this.dir, HANDLED), `${JSON.stringify({ seq: letter.seq, action, at })}\n`);
    this.handled.set(letter.seq, { action, at });
    return { ...letter, state: action, handled_at: at };
  }

  private decode(seq: number, record: Buffer): DeadLetter<T> {
    const nl = record.indexOf(0x0a);
    const header = JSON.parse(record.subarray(0, nl).toString('utf8')) as { topic: string; reason: string };
    const body = record.subarray(nl + 1);
    let payload: T[] = [];
    let undecodable: string | undefined;
    try {
      payload = this.codec.decodeMany(body);
    } catch (e) {
      undecodable = (e as Error).message;
    }
    const h = this.handled.get(seq);
    return {
      ...(undecodable === undefined ? {} : { undecodable }),
      seq,
      topic: header.topic,
      reason: header.reason,
      values: payload.length,
      bytes: body.length,
      state: h ? h.action : 'pending',
      handled_at: h ? h.at : null,
      payload,
    };
  }
}

function strip<T>(letter: DeadLetter<T>): DeadLetterEntry {
  const { payload, ...entry } = letter;
  void payload;
  return entry;
}
