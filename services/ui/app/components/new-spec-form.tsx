import { useState } from 'preact/hooks';
import { createSpec, specObjectId, type AnnotationSpec, type NewSpec } from '../annotation-specs';
import { ErrorBox } from './states';

const KINDS: [NewSpec['kind'], string][] = [
  ['integer', 'Whole number'],
  ['number', 'Number'],
  ['boolean', 'Yes / no'],
  ['choice', 'Choice'],
  ['text', 'Text'],
];

/** Defines a new score for the project: a Weave AnnotationSpec object, as the SDK publishes one. */
export function NewSpecForm({
  projectId,
  onCreated,
  onCancel,
}: {
  projectId: string;
  onCreated: (s: AnnotationSpec) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<NewSpec['kind']>('integer');
  const [min, setMin] = useState('1');
  const [max, setMax] = useState('5');
  const [options, setOptions] = useState('');
  const [maxLength, setMaxLength] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const numberOrUndef = (s: string) => (s.trim() === '' ? undefined : Number(s));
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!specObjectId(name)) return setError(new Error('Name the score (letters, digits, _ . -)'));
    const spec: NewSpec = { name, kind, description };
    if (kind === 'integer' || kind === 'number') {
      spec.min = numberOrUndef(min);
      spec.max = numberOrUndef(max);
    } else if (kind === 'choice') {
      spec.options = options
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean);
      if (spec.options.length < 2) return setError(new Error('A choice needs at least two options, separated by commas'));
    } else if (kind === 'text') spec.maxLength = numberOrUndef(maxLength);
    setBusy(true);
    setError(null);
    try {
      onCreated(await createSpec(projectId, spec));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="new-spec" aria-label="New score" onSubmit={submit}>
      <label>
        Name{' '}
        <input
          name="spec-name"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
          placeholder="e.g. Helpfulness"
          required
        />
      </label>
      <label>
        Kind
        <select name="spec-kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value as NewSpec['kind'])}>
          {KINDS.map(([k, label]) => (
            <option key={k} value={k}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {kind === 'integer' || kind === 'number' ? (
        <>
          <label>
            Min <input name="spec-min" type="number" size={4} value={min} onInput={(e) => setMin((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            Max <input name="spec-max" type="number" size={4} value={max} onInput={(e) => setMax((e.target as HTMLInputElement).value)} />
          </label>
        </>
      ) : null}
      {kind === 'choice' ? (
        <label class="grow">
          Options{' '}
          <input
            name="spec-options"
            value={options}
            placeholder="good, ok, bad"
            onInput={(e) => setOptions((e.target as HTMLInputElement).value)}
          />
        </label>
      ) : null}
      {kind === 'text' ? (
        <label>
          Max length{' '}
          <input
            name="spec-max-length"
            type="number"
            size={5}
            value={maxLength}
            onInput={(e) => setMaxLength((e.target as HTMLInputElement).value)}
          />
        </label>
      ) : null}
      <label class="grow">
        Description{' '}
        <input name="spec-description" value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit" class="primary" disabled={busy}>
        Create score
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      {error ? <ErrorBox error={error} /> : null}
    </form>
  );
}
