import type { Component } from '@weft/core';
import type { ServiceBus } from '@weft/bus';

/** The call-parts bus (WEFT_BUS) as a component: start connects, stop flushes and closes. */
export function busComponent(bus: ServiceBus<unknown>): Component {
  return {
    name: 'bus',
    start: () => bus.start(),
    stop: () => bus.close(),
    // The in-process bus is this process: a dependency only when it is Kafka's.
    ...(bus.kind === 'kafka' ? { health: async () => bus.health() } : {}),
  };
}
