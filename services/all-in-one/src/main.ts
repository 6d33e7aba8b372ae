import { runProgram } from '@weft/http';
import { createWeft } from './app';

/** `npm start`: the whole service in one process on PORT (default 6345). */
runProgram('all-in-one', async (config, log) => {
  const weft = await createWeft(config, log);
  return { app: weft.app, close: () => weft.close(), describe: { store: weft.store.mode, bus: config.WEFT_BUS, roles: config.WEFT_ROLES } };
});
