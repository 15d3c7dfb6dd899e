import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'
import tailwindcss from '@tailwindcss/vite'

// The build lands in server/studio/dist, where the Go package embeds it
// (go:embed cannot reach a parent directory). The output is committed and
// CI rebuilds it from the lockfile and compares, so it must be
// reproducible: no timestamps, content-hashed names only.
export default defineConfig({
  plugins: [react(), tailwindcss()],
  build: {
    outDir: '../server/studio/dist',
    emptyOutDir: true,
    sourcemap: false,
    // The CSP forbids inline scripts: never inline the module preload
    // polyfill or small assets as data: scripts.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
  server: {
    proxy: {
      '/api': 'http://127.0.0.1:8080',
      '/agui': 'http://127.0.0.1:8080',
      '/auth': 'http://127.0.0.1:8080',
    },
  },
})
