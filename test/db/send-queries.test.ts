import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { findDirectAudience, findStreamAudience, insertMessage, insertMessages } from '../../src/db/send-queries.js'

t.test('the raw statements of sending return exactly what Prisma returns', async (t) => {
  const { fx, services } = await buildTestApp(t)
  const prisma = services.prisma
  const { owner, member, bot, otherMember } = fx.users
  await prisma.alertWord.createMany({ data: [{ userId: member.id, word: 'deploy' }, { userId: bot.id, word: 'ignored' }] })
  // A trigger bumps the realm's version with every alert-word row written (two here).
  const version = (await prisma.realmAlertWordsVersion.findUniqueOrThrow({ where: { realmId: fx.realm.id } })).version

  t.test("a channel by ID and by name, with subscribers, participants, the realm's alert-word version and the owner", async (t) => {
    const query = { realmId: fx.realm.id, name: '', topic: 'Lunch', senderId: owner.id, ownerId: member.id, participants: true }
    const byId = await findStreamAudience(prisma, { ...query, streamId: fx.streams.secret.id })
    t.strictSame(byId?.stream, await prisma.stream.findUnique({ where: { id: fx.streams.secret.id } }))
    t.ok(byId?.stream.dateCreated instanceof Date)
    t.strictSame(byId?.owner, await prisma.user.findUnique({ where: { id: member.id } }))
    t.strictSame(byId?.subscriberIds, [owner.id, member.id].sort((a, b) => a - b))
    t.equal(byId?.alertWordsVersion, version)
    t.ok(version >= 2)
    t.strictSame(byId?.participantIds, [])

    const byName = await findStreamAudience(prisma, { ...query, streamId: null, name: 'SECRET', ownerId: null })
    t.equal(byName?.stream.id, fx.streams.secret.id)
    t.equal(byName?.owner, null)
    t.equal(await findStreamAudience(prisma, { ...query, streamId: null, name: 'no such channel' }), null)
    t.equal(await findStreamAudience(prisma, { ...query, streamId: 2_000_000_000 }), null)
  })

  t.test("the topic's participants, only when asked for", async (t) => {
    const query = { realmId: fx.realm.id, name: '', topic: 'who spoke', senderId: owner.id, ownerId: null, streamId: fx.streams.general.id }
    for (const sender of [member, owner, member]) {
      await prisma.message.create({
        data: { realmId: fx.realm.id, senderId: sender.id, streamId: fx.streams.general.id, topic: 'Who Spoke', content: 'x', renderedContent: '<p>x</p>', dateSent: new Date() },
      })
    }
    const asked = await findStreamAudience(prisma, { ...query, participants: true })
    t.strictSame(asked?.participantIds.sort((a, b) => a - b), [owner.id, member.id].sort((a, b) => a - b))
    t.strictSame((await findStreamAudience(prisma, { ...query, participants: false }))?.participantIds, [])
  })

  t.test("the sender's realm's linkifiers, in their order, with either audience", async (t) => {
    const first = await prisma.realmLinkifier.create({ data: { realmId: fx.realm.id, pattern: 'A-(?P<id>[0-9]+)', urlTemplate: 'https://a.example/{id}', order: 2 } })
    const second = await prisma.realmLinkifier.create({ data: { realmId: fx.realm.id, pattern: 'B-(?P<id>[0-9]+)', urlTemplate: 'https://b.example/{id}', order: 1 } })
    t.teardown(() => prisma.realmLinkifier.deleteMany({ where: { id: { in: [first.id, second.id] } } }))
    const expected = [
      { pattern: second.pattern, urlTemplate: second.urlTemplate },
      { pattern: first.pattern, urlTemplate: first.urlTemplate },
    ]
    const query = { realmId: fx.realm.id, name: '', topic: 't', senderId: owner.id, ownerId: null, participants: false, streamId: fx.streams.general.id }
    t.strictSame((await findStreamAudience(prisma, query))?.linkifiers, expected)
    t.strictSame((await findDirectAudience(prisma, { realmId: fx.realm.id, senderId: owner.id, ids: [member.id], emails: [] })).linkifiers, expected)
    t.strictSame((await findDirectAudience(prisma, { realmId: fx.realm.id + 1_000_000, senderId: owner.id, ids: [], emails: [] })).linkifiers, [], "another realm's: none")
  })

  t.test('direct-message candidates by ID and by email', async (t) => {
    const byIds = await findDirectAudience(prisma, { realmId: fx.realm.id, senderId: owner.id, ids: [member.id, otherMember.id], emails: [] })
    // With what decides whether the sender may name them by their real address (the fixture's people keep the default visibility, everyone).
    const pick = (u: typeof member) => ({ id: u.id, email: u.email, deliveryEmail: u.deliveryEmail, fullName: u.fullName, isActive: u.isActive, isBot: u.isBot, emailAddressVisibility: 1 })
    t.strictSame(byIds.users, [member, otherMember].sort((a, b) => a.id - b.id).map(pick))
    t.equal(byIds.alertWordsVersion, version)
    const byEmail = await findDirectAudience(prisma, { realmId: fx.realm.id, senderId: owner.id, ids: [], emails: [member.email.toUpperCase()] })
    t.strictSame(byEmail.users, [pick(member)])
  })

  t.test('the inserted message, its rows, attachments and the channel first message', async (t) => {
    const stream = await prisma.stream.create({
      data: { realmId: fx.realm.id, name: 'fresh', canRemoveSubscribersGroupId: fx.streams.general.canRemoveSubscribersGroupId, dateCreated: new Date() },
    })
    const upload = await prisma.attachment.create({ data: { realmId: fx.realm.id, ownerId: member.id, fileName: 'a.txt', pathId: `${fx.realm.id}/ab/a.txt`, size: 1 } })
    const { message, xid, firstInStream } = await insertMessage(
      prisma,
      {
        realmId: fx.realm.id, senderId: member.id, streamId: stream.id, topic: 'hi', dmUserIds: [], content: 'c', renderedContent: '<p>c</p>',
        dateSent: new Date(1_700_000_000_123), client: 'test', hasLink: true, hasImage: false, hasAttachment: true,
      },
      { userIds: [member.id, owner.id], flags: [1, 0], uploadPaths: [upload.pathId, 'not/mine'] },
    )
    t.strictSame(message, await prisma.message.findUnique({ where: { id: message.id } }))
    t.match(xid, /^\d+$/)
    t.strictSame(
      await prisma.userMessage.findMany({ where: { messageId: message.id }, orderBy: { userId: 'asc' } }),
      [{ userId: member.id, messageId: message.id, flags: 1 }, { userId: owner.id, messageId: message.id, flags: 0 }].sort((a, b) => a.userId - b.userId),
    )
    t.strictSame(await prisma.attachmentMessage.findMany({ where: { messageId: message.id } }), [{ attachmentId: upload.id, messageId: message.id }])
    t.equal((await prisma.stream.findUniqueOrThrow({ where: { id: stream.id } })).firstMessageId, message.id)
    t.equal(firstInStream, true, 'reported as the channel\'s first message')

    const direct = await insertMessage(
      prisma,
      {
        realmId: fx.realm.id, senderId: member.id, streamId: null, topic: '', dmUserIds: [member.id, owner.id].sort((a, b) => a - b), content: 'd', renderedContent: '<p>d</p>',
        dateSent: new Date(), client: 'test', hasLink: false, hasImage: false, hasAttachment: false,
      },
      { userIds: [member.id], flags: [0], uploadPaths: [] },
    )
    t.strictSame(direct.message, await prisma.message.findUnique({ where: { id: direct.message.id } }))
    t.equal((await prisma.stream.findUniqueOrThrow({ where: { id: stream.id } })).firstMessageId, message.id, 'first message kept')
    t.equal(direct.firstInStream, false)
    const again = await insertMessage(
      prisma,
      {
        realmId: fx.realm.id, senderId: member.id, streamId: stream.id, topic: 'hi', dmUserIds: [], content: 'c2', renderedContent: '<p>c2</p>',
        dateSent: new Date(), client: 'test', hasLink: false, hasImage: false, hasAttachment: false,
      },
      { userIds: [member.id], flags: [1], uploadPaths: [] },
    )
    t.equal(again.firstInStream, false, 'a later message is not the first')
  })

  t.test('several messages at once: in order, each with its rows, attachments and the channels first messages', async (t) => {
    const [one, two] = await Promise.all(
      ['bulk one', 'bulk two'].map((name) =>
        prisma.stream.create({ data: { realmId: fx.realm.id, name, canRemoveSubscribersGroupId: fx.streams.general.canRemoveSubscribersGroupId, dateCreated: new Date() } }),
      ),
    )
    if (!one || !two) throw new Error('no channels')
    const upload = await prisma.attachment.create({ data: { realmId: fx.realm.id, ownerId: member.id, fileName: 'b.txt', pathId: `${fx.realm.id}/cd/b.txt`, size: 1 } })
    const base = { realmId: fx.realm.id, senderId: member.id, topic: 't', renderedContent: '<p>x</p>', client: 'test', hasLink: false, hasImage: false, hasAttachment: false }
    const { messages, xid, firstInStreams } = await insertMessages(prisma, [
      { message: { ...base, streamId: one.id, dmUserIds: [], content: 'first', dateSent: new Date(1_700_000_000_123) }, recipients: { userIds: [member.id, owner.id], flags: [1, 0], uploadPaths: [upload.pathId] } },
      { message: { ...base, streamId: null, topic: '', dmUserIds: [member.id, otherMember.id].sort((a, b) => a - b), content: 'direct', dateSent: new Date() }, recipients: { userIds: [otherMember.id], flags: [2048], uploadPaths: [] } },
      { message: { ...base, streamId: one.id, dmUserIds: [], content: 'second in one', dateSent: new Date() }, recipients: { userIds: [owner.id], flags: [0], uploadPaths: [] } },
      { message: { ...base, streamId: two.id, dmUserIds: [], content: 'in two', dateSent: new Date() }, recipients: { userIds: [], flags: [], uploadPaths: [] } },
    ])
    t.match(xid, /^\d+$/)
    t.strictSame(messages.map((m) => m.content), ['first', 'direct', 'second in one', 'in two'])
    t.ok(messages.every((m, i) => i === 0 || m.id > (messages[i - 1]?.id ?? 0)), 'IDs increase in the given order')
    for (const m of messages) t.strictSame(m, await prisma.message.findUnique({ where: { id: m.id } }))
    const [first, direct, second, inTwo] = messages.map((m) => m.id)
    t.strictSame(
      await prisma.userMessage.findMany({ where: { messageId: { in: messages.map((m) => m.id) } }, orderBy: [{ messageId: 'asc' }, { userId: 'asc' }] }),
      [
        ...[{ userId: member.id, messageId: first, flags: 1 }, { userId: owner.id, messageId: first, flags: 0 }].sort((a, b) => a.userId - b.userId),
        { userId: otherMember.id, messageId: direct, flags: 2048 },
        { userId: owner.id, messageId: second, flags: 0 },
      ],
    )
    t.strictSame(await prisma.attachmentMessage.findMany({ where: { attachmentId: upload.id } }), [{ attachmentId: upload.id, messageId: first }])
    t.equal((await prisma.stream.findUniqueOrThrow({ where: { id: one.id } })).firstMessageId, first)
    t.equal((await prisma.stream.findUniqueOrThrow({ where: { id: two.id } })).firstMessageId, inTwo)
    t.same([...firstInStreams].sort((a, b) => a - b), [one.id, two.id].sort((a, b) => a - b), 'the channels whose first message this was')
  })
})
