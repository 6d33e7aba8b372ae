import type { ComponentChildren } from 'preact';
import { ApiError } from '../api';

export function Loading({ what }: { what: string }) {
  return (
    <div class="state loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> Loading {what}…
    </div>
  );
}

/** An empty result, saying what to send to fill it. */
export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="state empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

/** A call id the project does not hold (a link to a deleted or mistyped call). */
export function NoSuchCall({ projectId, callId }: { projectId: string; callId: string | null | undefined }) {
  return (
    <Empty title="No such call">
      <p>
        No call <code>{callId}</code> in {projectId}.
      </p>
    </Empty>
  );
}

/** An error with the server's own reason (and the field it names). */
export function ErrorBox({ error }: { error: unknown }) {
  const e = error instanceof ApiError ? error : null;
  return (
    <div class="state error" role="alert">
      <strong>{e ? `Error ${e.status}` : 'Error'}</strong>: {e ? e.reason : String((error as Error)?.message ?? error)}
      {e?.field ? (
        <span class="field">
          {' '}
          (field <code>{e.field}</code>)
        </span>
      ) : null}
    </div>
  );
}
