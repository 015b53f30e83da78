# syntax=docker/dockerfile:1
# The service image: node runs dist/server.js as PID 1 (it handles SIGTERM itself), as a non-root
# user, with production dependencies only. Build: docker build -t sms-channel-gateway .
# Node 22 is the image's runtime: Node 20 is past its end of life, and every dependency
# (package.json's engines: ^20.19.0 || ^22.12.0 || >=24.0.0; docs/operations.md "Node version") runs on both.
ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS deps
# better-sqlite3 compiles from source when no prebuilt binary can be fetched; the headers come
# with the image (nodedir), so node-gyp needs no download.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
WORKDIR /app
# Installing runs the postinstall script, which generates the Prisma clients from prisma/.
COPY package.json package-lock.json prisma.config.ts ./
COPY scripts/generate-clients.mjs scripts/
COPY prisma prisma
RUN npm ci --no-audit --no-fund

FROM deps AS build
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/dist-inputs.mjs scripts/
COPY src src
COPY rest-compat rest-compat
COPY console console
RUN npm run build

FROM deps AS production-deps
RUN npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    DATABASE_URL=file:/data/gateway.db \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=production-deps /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
# The SQLite default lives on a volume the service user owns; with PostgreSQL it stays empty.
RUN mkdir /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 4000
# The slim image has no curl: node asks /readyz (database reachable, migrations applied).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The young generation's size and the malloc settings (above): as npm start runs it (docs/operations.md, "Memory").
CMD ["node", "--min-semi-space-size=4", "--max-semi-space-size=4", "dist/server.js"]
