# Roost container image: the compiled server on Node 20, run as a non-root user.
#   docker build -t roost .
#   docker run -p 9991:9991 roost                  (embedded database under /data, one replica)
#   docker run roost roost --help                  (the admin CLI)
# In a cluster set DATABASE_URL and REDIS_URL (see helm/roost). Everything is
# built and installed here: the container downloads and builds nothing when
# it starts.

# --- build: all dependencies, prisma generate + tsc into dist/ ---
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build

# --- runtime: production dependencies and the compiled output only ---
FROM node:20-slim
# The commit built (docker build --build-arg ROOST_COMMIT=$(git rev-parse HEAD)), shown in roost_build_info.
ARG ROOST_COMMIT=
ENV ROOST_COMMIT=${ROOST_COMMIT} \
    NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=9991 \
    DATA_DIR=/data
# pg_dump and pg_restore for `roost backup` / `roost restore` on PostgreSQL:
# Debian's PostgreSQL client, of the base image's Debian release (15 in
# bookworm, 17 in trixie); pg_dump reads servers of its version and older
# (docs/backup-and-restore.md).
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-client \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
# Migrations (plain SQL, applied by Roost at startup and by `roost migrate`).
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/bin ./bin
# The admin command: `roost …` (README "Operating Roost").
RUN ln -s /app/bin/roost.js /usr/local/bin/roost
RUN mkdir -p /data && chown node:node /data
# The node image's unprivileged user (uid 1000).
USER node
EXPOSE 9991
VOLUME ["/data"]
# No curl in slim images: Node fetches /healthz itself.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||9991)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node options: src/node-options.ts.
CMD ["node", "--max-semi-space-size=32", "dist/src/server.js"]
