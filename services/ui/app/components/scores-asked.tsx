import type { AnnotationSpec } from '../annotation-specs';
import type { AsyncState } from '../use-async';

/** The AnnotationSpecs (scores) a new queue asks its annotators for, picked by checkbox. */
export function ScoresAsked({
  specs,
  picked,
  setPicked,
}: {
  specs: AsyncState<AnnotationSpec[]>;
  picked: string[];
  setPicked: (update: (p: string[]) => string[]) => void;
}) {
  return (
    <fieldset class="queue-specs">
      <legend>Scores asked</legend>
      {specs.loading ? <span class="muted">Loading…</span> : null}
      {!specs.loading && specs.data?.length === 0 ? (
        <span class="muted">No AnnotationSpecs in the project yet (thumbs and notes only).</span>
      ) : null}
      {specs.data?.map((s) => (
        <label key={s.ref} class="check">
          <input
            type="checkbox"
            checked={picked.includes(s.ref)}
            onChange={() => setPicked((p) => (p.includes(s.ref) ? p.filter((x) => x !== s.ref) : [...p, s.ref]))}
          />{' '}
          {s.label}
        </label>
      ))}
    </fieldset>
  );
}
