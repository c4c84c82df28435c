// GET /messages presents the senders (and direct-message participants) that
// the node's authentication cache holds from that cache, and reads only the
// others (queries/messages.ts presentMessages). A fake cache that answers a
// different name for one user shows which source each sender came from; the
// cluster test (test/cluster/auth-cache.test.ts) shows the real cache is
// never stale across nodes.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { getMessages } from '../../src/queries/messages.js'
import type { User } from '../../src/db/index.js'

t.test('senders come from the authentication cache when it holds them', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, member, otherMember } = fx.users
  const general = fx.streams.general
  for (const sender of [member, otherMember]) {
    expectSuccess(t, await as(app, sender).post('/messages', { type: 'stream', to: general.name, topic: 'cache', content: `from ${sender.id}` }))
  }
  expectSuccess(t, await as(app, member).post('/messages', { type: 'direct', to: JSON.stringify([owner.id, otherMember.id]), content: 'to both' }))
  const asked: number[] = []
  const authCache = {
    cachedUserById: (id: number): User | undefined => {
      asked.push(id)
      return id === member.id ? ({ ...member, fullName: 'Cached Name' } as User) : undefined
    },
  }
  const read = async (cache?: typeof authCache) => {
    const result = await getMessages(
      { prisma: services.prisma, realm: fx.realm, user: owner, config: services.config, authCache: cache },
      { anchor: 'newest', numBefore: 3, numAfter: 0, includeAnchor: true, applyMarkdown: true, clientExtavatar: false, allowEmptyTopicName: true },
    )
    return { messages: result.messages.toJSON() as Record<string, unknown>[] }
  }
  const cached = await read(authCache)
  t.strictSame(
    cached.messages.map((m) => m.sender_full_name),
    ['Cached Name', otherMember.fullName, 'Cached Name'],
    "the cached sender's row is the cache's, the other sender's the database's",
  )
  const direct = cached.messages[2] as { display_recipient: { id: number; full_name: string }[] }
  t.strictSame(
    direct.display_recipient.map((u) => u.full_name),
    [owner, member, otherMember].sort((a, b) => a.id - b.id).map((u) => (u.id === member.id ? 'Cached Name' : u.fullName)),
    "the direct message's participants likewise",
  )
  t.ok(asked.includes(member.id) && asked.includes(otherMember.id) && asked.includes(owner.id), 'every sender and participant was asked of the cache')
  const uncached = await read()
  t.strictSame(uncached.messages.map((m) => m.sender_full_name), [member.fullName, otherMember.fullName, member.fullName], 'without a cache, all from the database')
})
