import { v7 as uuidv7 } from 'uuid';

/** Time-ordered id (UUIDv7, canonical 36-char form), as the reference generates call and trace ids. */
export function generateId(): string {
  return uuidv7();
}
