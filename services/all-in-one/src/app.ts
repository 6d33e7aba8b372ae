import type { Config, Logger } from '@weft/core';
import { compose, type Role, type RoleName, type Weft } from '@weft/runtime';
import { gatewayRole } from '@weft/svc-gateway';
import { queryRole } from '@weft/svc-query';
import { inferenceRole } from '@weft/svc-inference';
import { writerRole } from '@weft/svc-writer';

/** Every role weft has, by the name WEFT_ROLES uses. */
export const ROLES: Record<RoleName, Role> = { gateway: gatewayRole, writer: writerRole, query: queryRole, inference: inferenceRole };

/** The roles WEFT_ROLES names (all four by default). */
export function rolesFromConfig(config: Config): Role[] {
  return config.WEFT_ROLES.map((name) => ROLES[name]);
}

/**
 * The all-in-one composition: gateway, writer, query and inference in one process (or the
 * subset WEFT_ROLES names), on the bus WEFT_BUS picks (in-process by default) and, unless
 * CLICKHOUSE_URL is set, the embedded store. The same code runs distributed: only the bus differs.
 */
export function createWeft(config: Config, log: Logger): Promise<Weft> {
  return compose(config, log, rolesFromConfig(config));
}
