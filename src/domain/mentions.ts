// Who may use wildcard mentions (@all and friends, @topic).


/** Channels and topics up to this size accept wildcard mentions from anyone. */
export const WILDCARD_MENTION_THRESHOLD = 15

/** `wildcard_mention_policy` values (4, "stream admins", was removed). */
export const WILDCARD_MENTION_POLICY = {
  EVERYONE: 1,
  MEMBERS: 2,
  FULL_MEMBERS: 3,
  ADMINS: 5,
  NOBODY: 6,
  MODERATORS: 7,
} as const
export const WILDCARD_MENTION_POLICIES: readonly number[] = Object.values(WILDCARD_MENTION_POLICY)

export interface WildcardSender {
  /** Holds can_mention_many_users_group (level 352; it replaced wildcard_mention_policy). */
  mayMentionMany: boolean
}

const senderMayMentionMany = (s: WildcardSender): boolean => s.mayMentionMany

/** Channel wildcard (`@**all**` etc.): free in channels of at most 15 subscribers. */
export function wildcardMentionAllowed(s: WildcardSender & { subscriberCount: number }): boolean {
  return s.subscriberCount <= WILDCARD_MENTION_THRESHOLD || senderMayMentionMany(s)
}

/** Topic wildcard (`@**topic**`): free in topics of at most 15 participants. */
export function topicWildcardMentionAllowed(s: WildcardSender & { participantCount: number }): boolean {
  return s.participantCount <= WILDCARD_MENTION_THRESHOLD || senderMayMentionMany(s)
}
