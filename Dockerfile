# One image for every service; the command picks which one runs (docker-compose.yml). Node 26,
# the active LTS (package.json's engines: 20.19+ or 22.12+).
# Build stage: production dependencies exactly as the lockfile says (tsx, which runs the
# TypeScript sources, is one of them). Runtime stage: those files, run as the unprivileged `node`.
FROM node:26-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs ./libs
COPY services ./services
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:26-bookworm-slim
ENV NODE_ENV=production WEFT_DATA_DIR=/app/data
WORKDIR /app
COPY --from=build --chown=node:node /app /app
RUN mkdir -p /app/data && chown node:node /app/data
USER node
# HTTP, and OTLP/gRPC where the gateway runs (WEFT_OTLP_GRPC_PORT)
EXPOSE 6345 4317
CMD ["node", "--import", "tsx", "services/all-in-one/src/main.ts"]
