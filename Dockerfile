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
# The gateway runs as one bundle (esbuild, package.json's build:bundle): the image carries no
# node_modules, and the process holds one minified copy of the code it loads instead of ~1,900 module
# sources with their comments (~30 MiB less heap and external memory at start). GraphiQL's 9 MB page is
# a chunk of its own, loaded on the first GraphiQL request. Source maps sit beside the bundle:
# NODE_OPTIONS=--enable-source-maps turns stack traces back into src/ lines.
RUN npm run build && npm run build:bundle && npm run build:web

FROM ${NODE_IMAGE}
# The gateway needs node only: no package managers at run time.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/dist/bundle ./dist/bundle
COPY --from=build /app/web/dist ./web/dist
# The gateway keeps its CRD in step with this file at start (--install-crd).
COPY manifests/crd/nodeloadrules.example.com.yaml ./manifests/crd/
# Numeric, so the kubelet can check runAsNonRoot (the Deployment sets runAsUser: 65532 too). No
# HEALTHCHECK: Kubernetes probes /livez and /readyz.
USER 65532:65532
EXPOSE 8080 8443
ENTRYPOINT ["node", "dist/bundle/main.mjs"]
