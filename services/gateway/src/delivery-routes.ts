import type { FastifyInstance } from 'fastify';
import { delivery, totalCounts } from '@weft/core';
import { addRoute, type Authenticator } from '@weft/http';

export interface DeliveryRouteDeps {
  auth: Authenticator;
}

/**
 * The delivery counts of this process (libs/core delivery.ts) through the API: one project's
 * per entrance (tenancy as every project route), or every visible project's totals.
 */
export async function deliveryRoutes(app: FastifyInstance, deps: DeliveryRouteDeps): Promise<void> {
  const { auth } = deps;
  const over = (seconds: number | null) => seconds !== null && seconds > delivery.lagWarningSeconds;
  const counted = () => ({
    since: delivery.since.toISOString(),
    reports: delivery.reports(),
    lag_warning_seconds: delivery.lagWarningSeconds,
  });

  addRoute(app, auth, 'projectDelivery', async (body) => {
    const entrances = delivery.entrances(body.project_id);
    const lag = delivery.lag(body.project_id);
    return {
      project_id: body.project_id,
      ...counted(),
      entrances,
      total: totalCounts(entrances),
      lag,
      lag_over_warning: over(lag.seconds),
    };
  });
  addRoute(app, auth, 'projectsDelivery', async (_body, { caller }) => {
    const visible = (project: string) =>
      caller.isAdmin || (project !== '' && caller.entities.includes(project.slice(0, project.indexOf('/'))));
    const projects = delivery
      .projectIds()
      .filter(visible)
      .sort()
      .map((project) => {
        const lag = delivery.lag(project);
        return {
          project_id: project === '' ? null : project,
          total: totalCounts(delivery.entrances(project)),
          lag,
          lag_over_warning: over(lag.seconds),
        };
      });
    return { ...counted(), projects };
  });
}
