import { fmtSeconds, useDelivery } from '../delivery';
import { fmtInt } from '../format';
import { projectHref } from '../route';

/** Read again this often while a project's page is open. */
const EVERY_MS = 10_000;

/**
 * Over every page of a project: a warning while its calls take longer than the server's
 * threshold (WEFT_DELIVERY_LAG_WARN_MS) to become queryable after they were acknowledged.
 */
export function LagBanner({ projectId }: { projectId: string }) {
  const { data } = useDelivery(projectId, EVERY_MS);
  if (!data?.lag_over_warning) return null;
  return (
    <div class="lag-banner" role="alert">
      <strong>Calls are arriving late.</strong> The oldest call this project sent that was acknowledged and is not yet queryable has waited{' '}
      {fmtSeconds(data.lag.seconds)} (the warning starts at {fmtSeconds(data.lag_warning_seconds)})
      {data.lag.pending_parts ? `; ${fmtInt(data.lag.pending_parts)} call parts are waiting` : ''}. Nothing is lost: they will appear once
      stored. <a href={projectHref(projectId, ['delivery'])}>Delivery</a>
    </div>
  );
}
