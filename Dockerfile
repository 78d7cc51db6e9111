# nodeload gateway image. Build: docker build -t nodeload .
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY schema ./schema
COPY src ./src
COPY manifests ./manifests
COPY web ./web
RUN npm run build && npm run build:web && npm prune --omit=dev

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/manifests ./manifests
COPY --from=build /app/web/dist ./web/dist
COPY package.json ./
USER node
EXPOSE 8080 8443
ENTRYPOINT ["node", "dist/main.js"]
