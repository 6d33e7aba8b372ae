import type { Subscription } from '@weft/bus';
import { needs, type Role } from '@weft/runtime';
import { CallPartsWriter } from './writer';

/**
 * The writer stage: consumes the call-parts topic into ClickHouse. Its stop commits the offsets
 * of everything inserted (Kafka) or lets the in-process bus finish what publishers wait for.
 */
export const writerRole: Role = (_config, log) => ({
  name: 'writer',
  usesBus: true,
  components(deps) {
    const bus = needs(deps.bus, 'the bus', 'writer');
    let subscription: Subscription | null = null;
    return [
      {
        name: 'writer',
        start: async () => {
          subscription = await new CallPartsWriter(deps.store, log).subscribe(bus);
        },
        stop: async () => {
          await subscription?.stop();
        },
      },
    ];
  },
});
