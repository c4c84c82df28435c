import t from 'tap'
import { topicWildcardMentionAllowed, wildcardMentionAllowed } from '../../src/domain/mentions.js'
import { hasPolicyPermission, isFullMember, POLICY as P, ROLE } from '../../src/domain/roles.js'

const now = new Date('2024-06-10T00:00:00Z')
const joined = (daysAgo: number): Date => new Date(now.getTime() - daysAgo * 86_400_000)
const realm = { waitingPeriodThreshold: 3 }
const user = (role: number, daysAgo = 100) => ({ role, dateJoined: joined(daysAgo), isBot: false })

t.test('hasPolicyPermission', async (t) => {
  const table: [string, number, ReturnType<typeof user>, boolean][] = [
    ['nobody excludes owners', P.NOBODY, user(ROLE.OWNER), false],
    ['everyone includes guests', P.EVERYONE, user(ROLE.GUEST), true],
    ['owners: owner', P.OWNERS, user(ROLE.OWNER), true],
    ['owners: admin', P.OWNERS, user(ROLE.ADMIN), false],
    ['admins: owner', P.ADMINS, user(ROLE.OWNER), true],
    ['admins: moderator', P.ADMINS, user(ROLE.MODERATOR), false],
    ['moderators: moderator', P.MODERATORS, user(ROLE.MODERATOR), true],
    ['moderators: member', P.MODERATORS, user(ROLE.MEMBER), false],
    ['members: member', P.MEMBERS, user(ROLE.MEMBER), true],
    ['members: guest', P.MEMBERS, user(ROLE.GUEST), false],
    ['full members: old member', P.FULL_MEMBERS, user(ROLE.MEMBER, 3), true],
    ['full members: new member', P.FULL_MEMBERS, user(ROLE.MEMBER, 2), false],
    ['full members: new moderator', P.FULL_MEMBERS, user(ROLE.MODERATOR, 0), true],
    ['full members: old guest', P.FULL_MEMBERS, user(ROLE.GUEST, 100), false],
  ]
  for (const [name, policy, u, expected] of table) t.equal(hasPolicyPermission(policy, u, realm, now), expected, name)
  t.ok(isFullMember(user(ROLE.MEMBER, 0), { waitingPeriodThreshold: 0 }, now))
})

t.test('wildcard mentions: the threshold, then can_mention_many_users_group', async (t) => {
  const big = 16
  for (const mayMentionMany of [true, false]) {
    t.equal(wildcardMentionAllowed({ mayMentionMany, subscriberCount: big }), mayMentionMany)
    t.equal(wildcardMentionAllowed({ mayMentionMany, subscriberCount: 15 }), true)
    t.equal(topicWildcardMentionAllowed({ mayMentionMany, participantCount: big }), mayMentionMany)
    t.equal(topicWildcardMentionAllowed({ mayMentionMany, participantCount: 3 }), true)
  }
})
