import { useEffect, useState } from 'preact/hooks';
import { post, send } from '../api';
import { Layout } from '../components/layout';
import { ErrorBox, Loading } from '../components/states';
import { projectHref } from '../route';

interface Retention {
  retention_days: number | null;
}
interface Redaction {
  policy: 'off' | 'pii-v1';
}
interface Sampling {
  sample_rate: number;
  dry_run: boolean;
}

/** One setting's section: loads its value, edits a draft, saves it, and says how it went. */
function useSetting<T>(load: () => Promise<T>, deps: unknown[]) {
  const [value, setValue] = useState<T | undefined>();
  const [draft, setDraft] = useState<T | undefined>();
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const [saving, setSaving] = useState(false);
  useEffect(() => {
    setValue(undefined);
    setError(undefined);
    load().then(
      (v) => {
        setValue(v);
        setDraft(v);
      },
      (e: unknown) => setError(e),
    );
  }, deps);
  const save = (send: (v: T) => Promise<T>) => {
    if (draft === undefined) return;
    setSaving(true);
    setSaved(false);
    setError(undefined);
    send(draft).then(
      (v) => {
        setValue(v);
        setDraft(v);
        setSaved(true);
        setSaving(false);
      },
      (e: unknown) => {
        setError(e);
        setSaving(false);
      },
    );
  };
  const edit = (v: T) => {
    setDraft(v);
    setSaved(false);
  };
  const changed = JSON.stringify(draft) !== JSON.stringify(value);
  return { value, draft, edit, save, error, saved, saving, changed };
}

function SaveRow({ s, onSave }: { s: { saved: boolean; saving: boolean; changed: boolean; error: unknown }; onSave: () => void }) {
  return (
    <div class="save-row">
      <button type="button" class="primary" disabled={!s.changed || s.saving} onClick={onSave}>
        {s.saving ? 'Saving…' : 'Save'}
      </button>
      {s.saved && !s.changed ? (
        <span class="saved" role="status">
          Saved
        </span>
      ) : null}
      {s.error ? <ErrorBox error={s.error} /> : null}
    </div>
  );
}

/**
 * A project's settings: how long its calls are kept (/project/ttl_settings), whether sensitive
 * data in new calls is redacted (/project/sensitive_data_settings) and which share of new traces
 * is stored (/project/ingest_sampling_settings).
 */
export function SettingsView({ projectId }: { projectId: string }) {
  const body = { project_id: projectId };
  const retention = useSetting(() => post<Retention>('/project/ttl_settings/read', body), [projectId]);
  const redaction = useSetting(
    () => send<Redaction>('/project/sensitive_data_settings', body, { method: 'GET' }).then((r) => r.data),
    [projectId],
  );
  const sampling = useSetting(() => post<Sampling>('/project/ingest_sampling_settings/read', body), [projectId]);
  const days = retention.draft?.retention_days ?? null;
  const rate = sampling.draft?.sample_rate ?? 1;
  const percent = Math.round(rate * 1000) / 10;
  return (
    <Layout projectId={projectId} tab="settings">
      <h2>Settings</h2>

      <section class="setting" aria-labelledby="retention-title">
        <h3 id="retention-title">Retention</h3>
        <p class="muted">
          Calls (and their feedback) older than this leave the store at the server's next retention pass, within the hour.
        </p>
        {retention.value === undefined && !retention.error ? <Loading what="retention" /> : null}
        {retention.draft !== undefined ? (
          <div class="setting-fields">
            <label>
              <input type="radio" name="retention" checked={days === null} onChange={() => retention.edit({ retention_days: null })} /> Keep
              calls forever
            </label>
            <label>
              <input
                type="radio"
                name="retention"
                checked={days !== null}
                onChange={() => retention.edit({ retention_days: days ?? 30 })}
              />{' '}
              Keep calls for{' '}
              <input
                type="number"
                min={1}
                step={1}
                aria-label="Retention in days"
                value={days ?? ''}
                disabled={days === null}
                onInput={(e) => {
                  const n = Number((e.target as HTMLInputElement).value);
                  retention.edit({ retention_days: Number.isInteger(n) && n >= 1 ? n : (days ?? 1) });
                }}
              />{' '}
              days
            </label>
          </div>
        ) : null}
        <SaveRow s={retention} onSave={() => retention.save((v) => post<Retention>('/project/ttl_settings/update', { ...body, ...v }))} />
      </section>

      <section class="setting" aria-labelledby="redaction-title">
        <h3 id="redaction-title">Sensitive data</h3>
        <p class="muted">
          Redacted on the server in new calls' inputs, output, attributes and exceptions: e-mail addresses, phone and card numbers, US
          social security numbers, IBANs and IP addresses become <code>&lt;EMAIL_ADDRESS&gt;</code>, <code>&lt;PHONE_NUMBER&gt;</code>…
          Calls already stored keep their values.
        </p>
        {redaction.value === undefined && !redaction.error ? <Loading what="the sensitive-data policy" /> : null}
        {redaction.draft !== undefined ? (
          <div class="setting-fields">
            <label>
              <input
                type="checkbox"
                checked={redaction.draft.policy === 'pii-v1'}
                onChange={(e) => redaction.edit({ policy: (e.target as HTMLInputElement).checked ? 'pii-v1' : 'off' })}
              />{' '}
              Redact sensitive data in new calls (<code>pii-v1</code>)
            </label>
          </div>
        ) : null}
        <SaveRow
          s={redaction}
          onSave={() => redaction.save((v) => post<Redaction>('/project/sensitive_data_settings/update', { ...body, ...v }))}
        />
      </section>

      <section class="setting" aria-labelledby="sampling-title">
        <h3 id="sampling-title">Sampling</h3>
        <p class="muted">
          The share of new traces stored, decided per trace: a trace is kept or dropped whole. Dropped calls are counted on the{' '}
          <a href={projectHref(projectId, ['delivery'])}>Delivery</a> tab.
        </p>
        {sampling.value === undefined && !sampling.error ? <Loading what="sampling" /> : null}
        {sampling.draft !== undefined ? (
          <div class="setting-fields">
            <label>
              Store{' '}
              <input
                type="number"
                min={0}
                max={100}
                step="any"
                aria-label="Share of traces stored, in percent"
                value={percent}
                onInput={(e) => {
                  const n = Number((e.target as HTMLInputElement).value);
                  if (n >= 0 && n <= 100) sampling.edit({ ...sampling.draft!, sample_rate: n / 100 });
                }}
              />{' '}
              % of new traces
            </label>
            <label>
              <input
                type="checkbox"
                checked={sampling.draft.dry_run}
                onChange={(e) => sampling.edit({ ...sampling.draft!, dry_run: (e.target as HTMLInputElement).checked })}
              />{' '}
              Dry run: store every call, only count what the rate would drop
            </label>
          </div>
        ) : null}
        <SaveRow
          s={sampling}
          onSave={() => sampling.save((v) => post<Sampling>('/project/ingest_sampling_settings/update', { ...body, ...v }))}
        />
      </section>
    </Layout>
  );
}
