# syntax=docker/dockerfile:1
# The durable-agent worker: polls the AGENT_TASK_QUEUE of the Temporal server at TEMPORAL_ADDRESS
# and runs model calls and tools against the workspace mounted at /workspace.

# --- Stage 1: compile TypeScript and bundle the workflows ---
FROM node:20-bookworm-slim AS build
WORKDIR /app

COPY package.json package-lock.json ./
# package.json's `prepare` script builds, which cannot work before the sources are copied.
# `npm install` follows the lockfile; unlike `npm ci` it tolerates optional per-platform binaries
# that a registry mirror lacks.
RUN npm install --ignore-scripts --no-audit --no-fund

COPY tsconfig.json tsconfig.build.json ./
COPY scripts/ ./scripts/
COPY src/ ./src/
# tsc -p tsconfig.build.json && node scripts/bundle-workflows.mjs -> dist/, dist/workflow-bundle.js
RUN npm run build

# --- Stage 2: production dependencies and the compiled output only ---
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app

# bubblewrap runs each command in the sandbox exec mode (AGENT_EXEC_SECURITY=sandbox, the Helm
# chart's default); without it that mode refuses commands.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/*

COPY package.json package-lock.json ./
RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

COPY --from=build /app/dist ./dist

RUN mkdir -p /workspace && chown node:node /workspace
VOLUME ["/workspace"]

USER node

ENTRYPOINT ["node", "dist/cli/cli.js"]
CMD ["worker", "--workspace", "/workspace"]
