// Builds the dashboard into web/dist, which the gateway serves at `/` (src/server/dashboard.ts).
// Everything is bundled: the page makes no request beyond its own origin.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  // Relative asset URLs: the page also works behind a path prefix (kubectl proxy, an ingress sub-path).
  base: './',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // One small bundle; nothing is worth a separate request.
    assetsInlineLimit: 8192,
    reportCompressedSize: false,
  },
  server: {
    // `npx vite --config web/vite.config.ts` with a gateway on :8080 for live editing.
    proxy: { '/graphql': { target: 'http://127.0.0.1:8080', changeOrigin: false } },
  },
});
