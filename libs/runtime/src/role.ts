import type { FastifyInstance } from 'fastify';
import type { KeyStore, KeyStoreAuthenticator } from '@weft/auth';
import type { ReadYourWrites, ServiceBus } from '@weft/bus';
import type { CallPartEnvelope } from '@weft/ingest';
import type { Component, Config, Logger } from '@weft/core';
import type { Store } from '@weft/store';

export type RoleName = Config['WEFT_ROLES'][number];

/** What a role is given once the shared components run. */
export interface RoleDeps {
  config: Config;
  log: Logger;
  store: Store;
  /** Present when some role of the process declared `usesBus`. */
  bus: ServiceBus<CallPartEnvelope> | undefined;
  /** Present where the bus acknowledges before storing (the all-in-one's ingest log): reads wait on it to see their writes. */
  readYourWrites: ReadYourWrites | undefined;
  /** Present when some role of the process serves routes. */
  keys: KeyStore | undefined;
  auth: KeyStoreAuthenticator | undefined;
}

/** One role's part of a process (see compose). */
export interface RolePlan {
  name: RoleName;
  /** Publishes or consumes call parts: the process gets the bus. */
  usesBus?: boolean;
  /** Creates the first admin key when the store has none (where the gateway runs). */
  createsFirstKey?: boolean;
  /** Components of its own (e.g. the writer stage), started after the shared ones. */
  components?(deps: RoleDeps): Component[];
  /** Its routes, on the process's one HTTP server. */
  routes?(app: FastifyInstance, deps: RoleDeps): Promise<void>;
}

/**
 * A role as its service package defines it. Called first, before anything is opened, so a
 * bad role configuration (e.g. the upstreams file) stops the start early.
 */
export type Role = (config: Config, log: Logger) => RolePlan;

/** A dependency a role needs that the composition did not make (a role declaring too little). */
export function needs<T>(value: T | undefined, what: string, role: RoleName): T {
  if (value === undefined) throw new Error(`role ${role} needs ${what}, which its plan did not declare`);
  return value;
}
