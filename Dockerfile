# nodeload gateway image. Build: docker build -t nodeload .
# Pin the base image by digest for reproducible builds:
#   docker build --build-arg NODE_IMAGE=node:24.21.0-bookworm-slim@sha256:<digest> -t nodeload .
# test/integration/deploy.test.ts builds and runs the production tree exactly as the stages below do.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# Compiles the gateway (dist/) and the dashboard (web/dist/) with every dependency.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY schema ./schema
COPY src ./src
COPY web ./web
RUN npm run build && npm run build:web

# Production dependencies only (the "node" devDependency is not among them: the base image's node runs
# the gateway).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
# The gateway needs node only: no package managers at run time.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
# The gateway keeps its CRD in step with this file at start (--install-crd).
COPY manifests/crd/nodeloadrules.example.com.yaml ./manifests/crd/
COPY package.json ./
# Numeric, so the kubelet can check runAsNonRoot (the Deployment sets runAsUser: 65532 too). No
# HEALTHCHECK: Kubernetes probes /livez and /readyz.
USER 65532:65532
EXPOSE 8080 8443
ENTRYPOINT ["node", "dist/main.js"]
