# Image for the worker pool and the mock API (see docker-compose.yml).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY lua ./lua
COPY src ./src
COPY bench ./bench
COPY fixtures ./fixtures
RUN npm ci --no-audit --no-fund && npm prune --omit=dev
ENV NODE_ENV=production
ENTRYPOINT ["node", "bin/bulk-register.js"]
