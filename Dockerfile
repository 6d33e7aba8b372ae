# One image for every service; the command picks which one runs.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs ./libs
COPY services ./services
RUN npm ci --omit=dev --no-audit --no-fund && npm install --no-save tsx
ENV NODE_ENV=production
# HTTP, and OTLP/gRPC where the gateway runs (WEFT_OTLP_GRPC_PORT)
EXPOSE 6345 4317
CMD ["node", "--import", "tsx", "services/all-in-one/src/main.ts"]
