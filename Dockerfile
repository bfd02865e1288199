# Image for the worker pool and the mock API (see docker-compose.yml).
# Node 24 (LTS, supported until April 2028): Node 20 reached its end of life in April 2026.
# Every suite passes on 20, 24 and 26 (docs/operations.md, "Node.js versions").
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY lua ./lua
COPY src ./src
COPY bench ./bench
COPY fixtures ./fixtures
# the build's second half bundles the command line (scripts/bundle.mjs)
COPY scripts/bundle.mjs ./scripts/
RUN npm ci --no-audit --no-fund && npm prune --omit=dev
ENV NODE_ENV=production
ENTRYPOINT ["node", "bin/bulk-register.js"]
