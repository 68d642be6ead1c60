# syntax=docker/dockerfile:1
# nostr-push as a container image: one image for every role (NOSTR_PUSH__ROLES picks them).
#
#   docker build -t nostr-push .
#   docker run -p 8000:8000 -v nostr-push-data:/var/lib/nostr-push nostr-push
#
# Both stages start from the same Debian (bookworm) Node 20 image, so the native modules compiled
# in the build stage (better-sqlite3 and the secp256k1 addon) match the runtime's glibc and ABI.

ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: compile the native addons and the TypeScript, then drop the dev dependencies ---------
FROM ${NODE_IMAGE} AS build
# A compiler and Python for node-gyp; libsecp256k1-dev for the native signature addon
# (native/secp256k1 links the system library; without it the service would fall back to WASM).
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential python3 libsecp256k1-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` (the build) needs the sources, copied below; native dependencies
# (better-sqlite3) are rebuilt then.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm rebuild --no-audit --no-fund \
 && npm run build \
 && test -f native/secp256k1/build/Release/secp256k1.node \
 && test -f dist/.build-stamp \
 && npm prune --omit=dev --no-audit --no-fund

# --- runtime: Node, the libsecp256k1 shared library, the built app; no compiler ------------------
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends libsecp256k1-1 \
 && rm -rf /var/lib/apt/lists/*
# A dedicated system user without a login shell; the data directory is the only place it writes.
RUN groupadd --system nostr-push \
 && useradd --system --gid nostr-push --home-dir /var/lib/nostr-push --shell /usr/sbin/nologin nostr-push \
 && mkdir -p /var/lib/nostr-push \
 && chown nostr-push:nostr-push /var/lib/nostr-push
WORKDIR /app
# src/ ships beside dist/: bin/entry.js compares their times to pick dist/ (the build stamp is
# newer), and the binary can still run the source if dist/ is ever missing.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/src ./src
COPY --from=build /app/dist ./dist
COPY --from=build /app/native ./native
COPY --from=build /app/config ./config
ENV NODE_ENV=production \
    NOSTR_PUSH__DATA_DIR=/var/lib/nostr-push \
    NOSTR_PUSH__SERVER__LISTEN_ADDR=0.0.0.0:8000 \
    NOSTR_PUSH_SECP256K1=native
# native: the image was built with the addon, so a missing one is an error at start, not a
# silent fallback to the slower WASM build.
VOLUME ["/var/lib/nostr-push"]
EXPOSE 8000
USER nostr-push
# /health is 200 while the process serves (ok or degraded) and 503 once it is failing (a critical
# task died, the store does not answer). `healthcheck` asks it at the port server.listen_addr
# names (environment or config file), so moving the port needs no change here. Only processes
# with the api or pusher role serve HTTP: compose.yaml turns this check off for the others.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "bin/nostr-push.js", "healthcheck"]
ENTRYPOINT ["node", "--max-semi-space-size=32", "bin/nostr-push.js"]
CMD ["serve"]
