// Which user group a notification names when a user was mentioned through a
// group (upstream's get_user_group_mentions_data / get_mentioned_user_group):
// nothing when the user was also mentioned personally; otherwise, of the
// groups mentioned in the message (not silently) that have the user as a
// member, directly or through subgroups, the one with the fewest members.
import type { Services } from '../services.js'

export interface MentionedGroup {
  id: number
  name: string
}

const GROUP_MENTION = /<span class="user-group-mention" data-user-group-id="(\d+)">/g

/**
 * The group to name for a user mentioned in a message (from its rendered
 * HTML: Roost's `mentioned` flag covers group members too), or null.
 */
export async function mentionedUserGroup(prisma: Services['prisma'], userId: number, renderedContent: string): Promise<MentionedGroup | null> {
  if (renderedContent.includes(`<span class="user-mention" data-user-id="${userId}">`)) return null
  const ids = [...new Set([...renderedContent.matchAll(GROUP_MENTION)].map((m) => Number(m[1])))]
  if (ids.length === 0) return null
  const [row] = await prisma.$queryRaw<{ id: number; name: string }[]>`
    WITH RECURSIVE g(root, id) AS (
      SELECT r, r FROM unnest(${ids}::int[]) AS r
      UNION
      SELECT g.root, s.subgroup_id FROM user_group_subgroup s JOIN g ON s.supergroup_id = g.id
    ), members AS (
      SELECT DISTINCT g.root, m.user_id FROM g JOIN user_group_member m ON m.group_id = g.id
    )
    SELECT ug.id, ug.name FROM members JOIN user_group ug ON ug.id = members.root
    GROUP BY ug.id, ug.name HAVING bool_or(members.user_id = ${userId})
    ORDER BY count(*), ug.id LIMIT 1`
  return row ?? null
}
