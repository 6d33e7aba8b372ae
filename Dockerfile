# One image for every service; the command picks which one runs (docker-compose.yml). Node 26,
# the active LTS (package.json's engines: 20.19+ or 22.12+).
# Sources stage: what the next two start from. Build stage: every dependency as the lockfile
# says, and `npm run build` (the compiled mains and the UI's assets in dist/). Dependencies stage:
# the production dependencies only (tsx and esbuild, which build, are not among them). Runtime
# stage: those and dist/, run as the unprivileged `node`. tools/ (the tests' and benchmarks'
# harness) only reaches the build stage, as a workspace of the lockfile: nothing run needs it.
FROM node:26-bookworm-slim AS sources
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs ./libs
COPY services ./services
COPY bench/package.json ./bench/
COPY scripts ./scripts

FROM sources AS build
COPY tools ./tools
RUN npm ci --no-audit --no-fund && npm run build

FROM sources AS deps
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:26-bookworm-slim
# The engine's statements run on Node's thread pool (libs/core thread-pool.ts).
ENV NODE_ENV=production WEFT_DATA_DIR=/app/data UV_THREADPOOL_SIZE=16
WORKDIR /app
COPY --from=deps --chown=node:node /app /app
COPY --from=build --chown=node:node /app/dist /app/dist
RUN mkdir -p /app/data && chown node:node /app/data
USER node
# HTTP, and OTLP/gRPC where the gateway runs (WEFT_OTLP_GRPC_PORT)
EXPOSE 6345 4317
CMD ["node", "dist/all-in-one.mjs"]
