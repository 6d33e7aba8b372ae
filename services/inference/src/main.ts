import { createHttpServer, permissiveAuthenticator, runProgram } from '@weft/http';
import { inferenceRoutes } from './routes';

/** The inference service alone: chat completions, project completions, model records. */
runProgram('inference', async (config, log) => {
  const app = await createHttpServer({ log, bodyLimitBytes: config.WEFT_BODY_LIMIT_BYTES, version: '0.1.0' });
  await app.register(inferenceRoutes, { auth: permissiveAuthenticator });
  return {
    app,
    async close() {
      await app.close();
    },
  };
});
