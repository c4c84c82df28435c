// Prisma CLI configuration: the CLI runs offline on its bundled WASM schema
// engine through a driver adapter (DESIGN.md "Prisma, offline").
import path from 'node:path'
import type { PrismaConfig } from 'prisma'
import { PGlite } from '@electric-sql/pglite'
import { PrismaPGlite } from 'pglite-prisma-adapter'

// The CLI calls adapter() more than once; two PGlite instances on one
// directory silently lose DDL, so the instance is memoized.
// The datasource keeps url = env("DATABASE_URL"); without a value the CLI
// would reach for a native engine, so a placeholder is set for offline use.
process.env.DATABASE_URL ??= 'postgresql://localhost/roost'

let pglite: PGlite | undefined

export default {
  experimental: { adapter: true },
  engine: 'js',
  schema: path.join('prisma', 'schema.prisma'),
  async adapter() {
    pglite ??= new PGlite(process.env.PRISMA_PGLITE_DIR ?? 'memory://')
    return new PrismaPGlite(pglite)
  },
} satisfies PrismaConfig
