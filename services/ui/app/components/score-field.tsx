import { useEffect, useState } from 'preact/hooks';
import { fmtValue, integerChoices, parseValue, type AnnotationSpec } from '../annotation-specs';

/** Gives the focus back to the page, so the view's keys (j/k, digits…) work again. */
export const blurToPage = () => (document.activeElement as HTMLElement | null)?.blur?.();

/** The values a spec offers as buttons (yes/no, a choice, a small integer range), or null for a typed value. */
function buttonValues(spec: AnnotationSpec): (string | number | boolean)[] | null {
  if (spec.kind === 'boolean') return [true, false];
  if (spec.kind === 'choice' && spec.options && spec.options.length <= 9) return spec.options;
  return integerChoices(spec);
}

/**
 * The value a key picks while a button group has the focus: a small integer range by the
 * digit itself (`4` is 4), a choice by its position (`2` is the second), yes/no by y/t/1 or n/f/0.
 */
function valueForKey(spec: AnnotationSpec, values: (string | number | boolean)[], key: string): string | number | boolean | undefined {
  if (spec.kind === 'boolean') {
    if ('yt1'.includes(key)) return true;
    if ('nf0'.includes(key)) return false;
    return undefined;
  }
  if (!/^[0-9]$/.test(key)) return undefined;
  if (spec.kind === 'integer') return values.find((v) => v === Number(key));
  return values[Number(key) - 1];
}

/**
 * One AnnotationSpec's score on a call: buttons for yes/no, a choice or a 1–5 style range, else
 * an input saved with Enter. `mine` is the user's current value; `others` everyone else's.
 */
export function ScoreField({
  spec,
  index,
  showKey,
  mine,
  others,
  busy,
  onSet,
  onClear,
}: {
  spec: AnnotationSpec;
  /** 1-based: its key (1–9) focuses it where the view has keys. */
  index: number;
  /** Show the key that focuses it. */
  showKey: boolean;
  mine: unknown;
  others: unknown[];
  busy: boolean;
  onSet: (value: unknown) => Promise<boolean>;
  onClear: () => void;
}) {
  const values = buttonValues(spec);
  const [draft, setDraft] = useState(mine === undefined ? '' : fmtValue(mine));
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => setDraft(mine === undefined ? '' : fmtValue(mine)), [mine]);
  const hint =
    spec.kind === 'integer' || spec.kind === 'number'
      ? range(spec)
      : spec.kind === 'text' && spec.maxLength
        ? `≤ ${spec.maxLength} chars`
        : '';
  const save = async () => {
    const parsed = parseValue(spec, draft);
    if ('error' in parsed) return setProblem(`Expected ${parsed.error}`);
    setProblem(null);
    if (mine !== undefined && JSON.stringify(parsed.value) === JSON.stringify(mine)) return blurToPage();
    if (await onSet(parsed.value)) blurToPage();
  };
  return (
    <div
      class="score-field"
      data-spec={spec.objectId}
      data-score-index={index}
      data-value={mine === undefined ? undefined : fmtValue(mine)}
    >
      <div class="score-label" title={spec.description ?? undefined}>
        {showKey && index <= 9 ? <kbd>{index}</kbd> : null} {spec.label}
        {hint ? <span class="muted"> {hint}</span> : null}
      </div>
      {values ? (
        <div
          class="score-buttons"
          role="group"
          aria-label={spec.label}
          tabIndex={-1}
          onKeyDown={(e) => {
            if (e.key === 'Escape') return blurToPage();
            const v = valueForKey(spec, values, e.key);
            if (v === undefined) return;
            e.preventDefault();
            void onSet(v).then((ok) => ok && blurToPage());
          }}
        >
          {values.map((v) => (
            <button
              key={String(v)}
              type="button"
              class="score-option"
              aria-pressed={mine === v}
              disabled={busy}
              onClick={() => void (mine === v ? onClear() : onSet(v))}
            >
              {spec.kind === 'boolean' ? (v ? 'Yes' : 'No') : String(v)}
            </button>
          ))}
        </div>
      ) : (
        <form
          class="score-input"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          {spec.kind === 'choice' ? (
            <select
              aria-label={spec.label}
              value={draft}
              onChange={(e) => {
                const v = spec.options!.find((o) => String(o) === (e.target as HTMLSelectElement).value);
                if (v !== undefined) void onSet(v);
              }}
            >
              <option value="">—</option>
              {spec.options!.map((o) => (
                <option key={String(o)} value={String(o)}>
                  {String(o)}
                </option>
              ))}
            </select>
          ) : (
            <input
              aria-label={spec.label}
              type={spec.kind === 'integer' || spec.kind === 'number' ? 'number' : 'text'}
              step={spec.kind === 'integer' ? 1 : 'any'}
              min={spec.min}
              max={spec.max}
              maxLength={spec.maxLength}
              placeholder={spec.kind === 'json' ? 'JSON value' : spec.kind === 'text' ? 'Text…' : ''}
              value={draft}
              onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
              onKeyDown={(e) => e.key === 'Escape' && blurToPage()}
            />
          )}
          {spec.kind !== 'choice' ? (
            <button type="submit" disabled={busy || draft.trim() === ''}>
              Save
            </button>
          ) : null}
        </form>
      )}
      {mine !== undefined ? (
        <button type="button" class="link remove" aria-label={`Clear ${spec.label}`} disabled={busy} onClick={onClear}>
          ✕
        </button>
      ) : null}
      {problem ? <span class="score-problem">{problem}</span> : null}
      {others.length ? <span class="muted score-others">others: {others.map(fmtValue).join(', ')}</span> : null}
    </div>
  );
}

function range(spec: AnnotationSpec): string {
  if (spec.min !== undefined && spec.max !== undefined) return `${spec.min}–${spec.max}`;
  if (spec.min !== undefined) return `≥ ${spec.min}`;
  if (spec.max !== undefined) return `≤ ${spec.max}`;
  return '';
}
