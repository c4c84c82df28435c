// The realm's custom emoji as the API shows them (register's `realm_emoji`,
// GET /realm/emoji, `realm_emoji` update events): every emoji, deactivated
// ones included, keyed by ID.
import type { PrismaClient, RealmEmoji, Tx } from '../db/index.js'

export interface RealmEmojiDict {
  id: string
  name: string
  source_url: string
  /** The first frame of an animated emoji, as PNG; null for a still one. */
  still_url: string | null
  deactivated: boolean
  author_id: number | null
}

/** Where an emoji's image is served (and its key in storage, without the leading `/user_avatars/`). */
export const realmEmojiPath = (realmId: number, fileName: string): string => `${realmId}/emoji/images/${fileName}`

/** Where an animated emoji's still image is served and stored: `still/<its file name>.png`, as upstream. */
export const realmEmojiStillPath = (realmId: number, fileName: string): string =>
  `${realmId}/emoji/images/still/${fileName.replace(/\.[a-z]+$/, '')}.png`

export function presentRealmEmoji(e: Pick<RealmEmoji, 'id' | 'realmId' | 'name' | 'fileName' | 'isAnimated' | 'deactivated' | 'authorId'>): RealmEmojiDict {
  return {
    id: String(e.id),
    name: e.name,
    source_url: `/user_avatars/${realmEmojiPath(e.realmId, e.fileName)}`,
    still_url: e.isAnimated ? `/user_avatars/${realmEmojiStillPath(e.realmId, e.fileName)}` : null,
    deactivated: e.deactivated,
    author_id: e.authorId,
  }
}

export async function getRealmEmoji(db: PrismaClient | Tx, realmId: number): Promise<Record<string, RealmEmojiDict>> {
  const rows = await db.realmEmoji.findMany({ where: { realmId }, orderBy: { id: 'asc' } })
  return Object.fromEntries(rows.map((e) => [String(e.id), presentRealmEmoji(e)]))
}
