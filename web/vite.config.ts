import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the service under /app; `npm run dev:web` proxies GraphQL to a service on port 3000.
export default defineConfig({
  root: import.meta.dirname,
  base: '/app/',
  plugins: [react()],
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    chunkSizeWarningLimit: 1200,
  },
  server: { proxy: { '/graphql': 'http://127.0.0.1:3000', '/api': 'http://127.0.0.1:3000' } },
});
