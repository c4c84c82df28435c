// The browser app's build: Svelte 5 + TypeScript from web/ into dist/web
// (index.html and content-hashed files under assets/). scripts/build.mjs runs
// it when a source under web/ changed and then writes the .gz and .br copies
// that src/http/web-app.ts serves. The compiled model (dist/web/src, made by
// tsc for the unit tests) shares the directory, so it is not emptied here.
import { defineConfig } from 'vite'
import { svelte } from '@sveltejs/vite-plugin-svelte'
import { fileURLToPath } from 'node:url'

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [svelte()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: false,
    assetsDir: 'assets',
    target: 'es2022',
    // No inline script or data: module anywhere: the page's CSP forbids them.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
    rolldownOptions: {
      // The page, and the service worker at a fixed name (served at /sw.js, its scope the whole app).
      input: { index: fileURLToPath(new URL('index.html', import.meta.url)), sw: fileURLToPath(new URL('src/sw.ts', import.meta.url)) },
      output: { entryFileNames: (chunk) => (chunk.name === 'sw' ? 'sw.js' : 'assets/[name]-[hash].js') },
    },
  },
})
