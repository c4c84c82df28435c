// GET /messages/matches_narrow (upstream messages_in_narrow_backend): which of
// the given messages, among those the user received, match a narrow, with
// the search highlighting fields of each: { [id]: { match_content,
// match_subject } }. Roost's search is a substring match without
// highlighting (queries/narrow-sql.ts), so match_content is the rendered
// content and match_subject the HTML-escaped topic, which is also what
// upstream answers for narrows without a search term.
import type { ActionContext } from '../services.js'
import { Prisma } from '../db/index.js'
import { escapeHtml } from '../domain/html-escape.js'
import { parseNarrow } from '../domain/narrow.js'
import { compileNarrow } from './narrow-sql.js'
import { MAX_MESSAGES_RESPONSE_BYTES } from '../domain/limits.js'
import { matchesTooLarge } from '../errors.js'

/** Bytes counted for a match besides its rendered content and topic (the keys and the escaping). */
const MATCH_OVERHEAD_BYTES = 64

/** The most message IDs one request may ask about (upstream's MAX_MESSAGES_PER_FETCH). */
export const MAX_MATCH_IDS = 5000

export async function messagesMatchingNarrow(
  ctx: ActionContext,
  messageIds: readonly number[],
  narrow: unknown,
): Promise<Record<string, { match_content: string; match_subject: string }>> {
  const terms = parseNarrow(narrow)
  const compiled = await compileNarrow(ctx.prisma, ctx.user, terms)
  const ids = [...new Set(messageIds)].filter((id) => id > 0 && id <= 2_147_483_647)
  const out: Record<string, { match_content: string; match_subject: string }> = {}
  if (ids.length === 0) return out
  // Only messages the user received (um.user_id is the viewer in both shapes of the compiled narrow).
  // Weighed first (the bytes of the rendered content and topic of each
  // match): rows are read only within MAX_MESSAGES_RESPONSE_BYTES, and an
  // answer that would exceed it is refused, so no answer holds more.
  const rows = await ctx.prisma.$queryRaw<{ id: number; topic: string; rendered_content: string; matched: number }[]>(Prisma.sql`
    WITH w AS (
      SELECT m.id, octet_length(m.rendered_content) + octet_length(m.topic) + ${MATCH_OVERHEAD_BYTES} AS weight ${compiled.from}
      WHERE ${compiled.where} AND um.user_id IS NOT NULL AND m.id = ANY(${ids}::int[])
    ), r AS (SELECT id, sum(weight) OVER (ORDER BY id) - weight AS preceding, (count(*) OVER ())::int AS matched FROM w)
    SELECT m.id, m.topic, m.rendered_content, r.matched FROM r JOIN message m ON m.id = r.id
    WHERE r.preceding < ${MAX_MESSAGES_RESPONSE_BYTES} ORDER BY m.id`)
  if (rows.length > 0 && (rows[0]?.matched ?? 0) > rows.length) throw matchesTooLarge(MAX_MESSAGES_RESPONSE_BYTES)
  for (const r of rows) out[String(r.id)] = { match_content: r.rendered_content, match_subject: escapeHtml(r.topic) }
  return out
}
