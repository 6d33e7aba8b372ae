import { isEndPart, isStartPart, isWholeCallPart, wholeCallPart, type CallPartRow } from '@weft/store';

/**
 * The parts of one publish with every end folded into its call's start when both are in it (the
 * reference SDK batches a quick call's start and end together): one part per finished call, half
 * the rows for the bus and the engine. Nothing visible changes: for each call, the starts keep
 * their order and so do the ends (an end joins the latest start before it, with no end of that
 * call in between), and the tables the views feed get the same rows. Renames, deletes and whole
 * calls pass through, and so does an end with no start of its call waiting (none in the batch, its
 * end already folded in, or a whole part of that call since).
 */
export function coalesceCallParts(rows: readonly CallPartRow[]): CallPartRow[] {
  const out: CallPartRow[] = [];
  // Where in `out` the latest start of each call id still waits for its end. Keyed by the id
  // alone (no key string to build per part); a fold checks the project, so the same id in two
  // projects is never folded across them (at worst a part of theirs is left unfolded).
  const waiting = new Map<string, number>();
  for (const row of rows) {
    if (isStartPart(row)) {
      waiting.set(row.id, out.length);
    } else if (isEndPart(row)) {
      const at = waiting.get(row.id);
      if (at !== undefined && out[at]!.project_id === row.project_id) {
        out[at] = wholeCallPart(out[at]!, row);
        waiting.delete(row.id);
        continue;
      }
    } else if (isWholeCallPart(row)) {
      // A later end of the same call must stay after this one's.
      waiting.delete(row.id);
    }
    out.push(row);
  }
  return out;
}
