/** Topics of the bus. All messages of one key share a partition and keep their order. */
export const TOPICS = {
  callParts: 'weft.call-parts',
  deadLetter: 'weft.dead-letter',
} as const;

export interface BusMessage<T> {
  /** Partitioning key: messages with one key keep their order. */
  key: string;
  value: T;
}
