/**
 * The embedded engine runs each statement on a thread of Node's pool (libuv's, shared with file
 * I/O and DNS), 4 threads unless UV_THREADPOOL_SIZE says otherwise — fewer than the lanes'
 * connections, so a page's statement could wait in that pool behind analytics, exports and
 * builds while its lane had a free connection. Node reads the variable when the process starts:
 * it is set where processes are started (`npm start`, the image, the test harness, the benches).
 */
export const ENGINE_THREAD_POOL_SIZE = 16;

/** The thread pool this process runs with (what Node read at its start). */
export function threadPoolSize(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.UV_THREADPOOL_SIZE);
  return Number.isInteger(n) && n > 0 ? Math.min(n, 1024) : 4;
}

/** `env` with the engine's pool size, unless it names one. */
export function withEngineThreadPool(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return env.UV_THREADPOOL_SIZE ? env : { ...env, UV_THREADPOOL_SIZE: String(ENGINE_THREAD_POOL_SIZE) };
}
