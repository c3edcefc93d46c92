import path from 'node:path';
import { defineConfig } from 'prisma/config';

// Prisma's CLI would download a native schema engine from a host this machine cannot reach; the
// bridge runs the engine Prisma publishes on npm as WebAssembly instead (see docs/prisma-engine.md).
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(import.meta.dirname, 'prisma', 'engine-bridge.mjs');
process.env.CHECKPOINT_DISABLE ??= '1';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    // generate needs no database; migrate commands read DATABASE_URL.
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
  },
});
