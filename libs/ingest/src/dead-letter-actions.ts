import type { Store } from '@weft/store';

/**
 * Every statement on dead_letter_actions (migration 150): what became of each dead letter of the
 * Kafka dead-letter topic (append-only, so the actions are kept beside it), shared by every
 * gateway. A letter is named `<topic>/<partition>/<offset>`; its first action is what became of it.
 */

export type DeadLetterAction = 'replayed' | 'discarded';

/** The first action on each of these letters, with its time in the engine's text form (UTC); letters without one are absent. */
export async function firstDeadLetterActions(
  store: Store,
  letters: string[],
): Promise<{ letter: string; first_action: DeadLetterAction; first_at: string }[]> {
  return store.rows<{ letter: string; first_action: DeadLetterAction; first_at: string }>(
    `SELECT letter, argMin(action, at) AS first_action, toString(min(at)) AS first_at FROM dead_letter_actions
              WHERE letter IN {letters:Array(String)} GROUP BY letter`,
    { letters },
    { name: 'dead-letters.actions' },
  );
}

/** Records an action on a letter, by `by` at `at` (ISO). */
export async function recordDeadLetterAction(
  store: Store,
  letter: string,
  action: DeadLetterAction,
  by: string,
  at: string,
): Promise<void> {
  await store.insertRows('dead_letter_actions', [{ letter, action, at, by }], { name: 'dead-letters.record' });
}
