# Roost container image: the compiled server on Node 20, run as a non-root user.
# Build: docker build -t roost .    Run: docker run -p 9991:9991 roost
# With no DATABASE_URL it runs the embedded database under /data (one replica);
# in a cluster set DATABASE_URL and REDIS_URL (see helm/roost).

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
# build = prisma generate (offline, bundled WASM engine) + tsc into dist/
RUN npm run build && npm prune --omit=dev

FROM node:20-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=9991 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma ./prisma
RUN mkdir -p /data && chown node:node /data
# The node image's unprivileged user (uid 1000).
USER node
EXPOSE 9991
VOLUME ["/data"]
CMD ["node", "dist/src/server.js"]
