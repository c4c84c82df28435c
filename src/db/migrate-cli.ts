// `npm run migrate`: applies pending migrations to DATABASE_URL (PostgreSQL).
// Run by the Helm hook Job before a rollout; safe to run from several places
// at once (advisory lock, see migrate.ts). Exit code 0 on success, 1 on
// failure, 2 when DATABASE_URL is missing.
import { openDatabase, redact } from './client.js'
import { applyMigrations } from './migrate.js'

async function main(): Promise<number> {
  const url = process.env.DATABASE_URL
  if (url === undefined || url === '') {
    console.error('DATABASE_URL is required: postgresql://user:password@host:5432/database')
    return 2
  }
  const db = await openDatabase({ databaseUrl: url })
  try {
    const applied = await applyMigrations(db, (msg) => console.log(msg))
    console.log(applied.length === 0 ? `${redact(url)}: up to date` : `${redact(url)}: applied ${applied.length} migration(s)`)
    return 0
  } finally {
    await db.close()
  }
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (err: unknown) => {
    console.error(`migration failed: ${err instanceof Error ? err.message : String(err)}`)
    process.exitCode = 1
  },
)
