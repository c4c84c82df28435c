// The realm's alert-word matcher, cached on this node and rebuilt when the
// realm's alert-word version (realm_alert_words_version, bumped by a trigger
// in the same transaction as every change to any of its users' words) is not the one the
// cached matcher was built from. Every node compares against the version it
// reads from the database with each send, so a change made through any node
// is seen by the next send on every node.
import type { PrismaClient, Tx } from '../db/index.js'
import { Prisma } from '../db/index.js'
import { AlertWordMatcher } from '../domain/alert-words.js'

type Db = PrismaClient | Tx

interface Cached {
  version: number
  matcher: AlertWordMatcher
}

// Per node and database: keyed by an object that lives exactly as long as
// the node's services (the authentication cache of its database).
const caches = new WeakMap<object, Map<number, Cached>>()

/** The realm's current alert-word version (0 before any change). */
export async function alertWordsVersion(db: Db, realmId: number): Promise<number> {
  const [row] = await db.$queryRaw<{ version: number }[]>`SELECT version FROM realm_alert_words_version WHERE realm_id = ${realmId}`
  return row?.version ?? 0
}

/**
 * The matcher for the realm's alert words at `version` (read by the caller,
 * e.g. with the send's own statement; omitted → read here). The words of
 * every user are in it; callers match among a message's recipients.
 */
export async function realmAlertWordMatcher(db: Db, node: object, realmId: number, version?: number): Promise<AlertWordMatcher> {
  const byRealm = caches.get(node) ?? new Map<number, Cached>()
  caches.set(node, byRealm)
  const wanted = version ?? (await alertWordsVersion(db, realmId))
  const cached = byRealm.get(realmId)
  if (cached && cached.version === wanted) return cached.matcher
  // Words and version from one snapshot, so the matcher is tagged with the version it reflects.
  const [row] = await db.$queryRaw<{ version: number | null; words: [number, string][] | null }[]>(Prisma.sql`
    SELECT
      (SELECT version FROM realm_alert_words_version WHERE realm_id = ${realmId}) AS version,
      (SELECT json_agg(json_build_array(a.user_id, a.word)) FROM alert_word a JOIN user_profile u ON u.id = a.user_id
        WHERE u.realm_id = ${realmId}) AS words`)
  const matcher = new AlertWordMatcher((row?.words ?? []).map(([userId, word]) => ({ userId, word })))
  byRealm.set(realmId, { version: row?.version ?? 0, matcher })
  return matcher
}
