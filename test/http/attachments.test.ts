// The user's uploads (GET /attachments, DELETE /attachments/{id}) and
// temporary upload URLs (GET /api/v1/user_uploads/{realm_id}/{path} →
// /user_uploads/temporary/{token}/{filename}).
import t, { type Test } from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildTestApp } from '../support/app.js'
import { as, basicAuth } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents, type CapturedEvent } from '../support/events.js'
import { hostOf, sendMultipart } from '../support/multipart.js'
import type { User } from '../../src/db/index.js'

const upload = async (t: Test, app: FastifyInstance, user: User, name: string, data: string): Promise<string> =>
  expectSuccess(t, await sendMultipart(app, user, 'POST', '/user_uploads', [{ name: 'filename', fileName: name, contentType: 'text/plain', data }])).url as string

const send = async (t: Test, app: FastifyInstance, user: User, params: Record<string, unknown>): Promise<number> =>
  expectSuccess(t, await as(app, user).post('/messages', params)).id as number

t.test('attachments and temporary URLs', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'roost-attachments-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const { app, fx, services } = await buildTestApp(t, { config: { dataDir } })
  const { owner, member, otherMember, guest } = fx.users

  t.test('GET /attachments lists my uploads with the messages that link them and the space used', async (t) => {
    const url = await upload(t, app, member, 'plan.txt', 'the plan')
    const other = await upload(t, app, otherMember, 'theirs.txt', 'not mine!')
    const m1 = await send(t, app, member, { type: 'stream', to: 'general', topic: 'files', content: `[plan](${url})` })
    const m2 = await send(t, app, member, { type: 'stream', to: 'design', topic: 'files', content: `again [plan](${url})` })
    const body = expectSuccess(t, await as(app, member).get('/attachments'))
    const row = await services.prisma.attachment.findFirstOrThrow({ where: { ownerId: member.id, fileName: 'plan.txt' } })
    const dates = await services.prisma.message.findMany({ where: { id: { in: [m1, m2] } }, orderBy: { id: 'asc' } })
    t.same(body.attachments, [
      {
        id: row.id,
        name: 'plan.txt',
        path_id: row.pathId,
        size: 8,
        create_time: row.createdAt.getTime(),
        messages: dates.map((m) => ({ id: m.id, date_sent: m.dateSent.getTime() })),
      },
    ])
    t.equal(body.upload_space_used, 8 + 9, 'all files of the organization')
    t.equal(decodeURIComponent(url), `/user_uploads/${row.pathId}`)
    t.notOk(JSON.stringify(body).includes(decodeURIComponent(other).split('/')[4] as string), "others' uploads are not listed")
    t.same(expectSuccess(t, await as(app, guest).get('/attachments')).attachments, [])
  })

  t.test('DELETE /attachments/{id} removes my file, tells my clients, and only mine', async (t) => {
    const url = await upload(t, app, member, 'gone.txt', 'bye')
    const row = await services.prisma.attachment.findFirstOrThrow({ where: { ownerId: member.id, fileName: 'gone.txt' } })
    expectError(t, await as(app, otherMember).delete(`/attachments/${row.id}`), { code: 'BAD_REQUEST', msg: 'Invalid attachment' })
    expectError(t, await as(app, owner).delete(`/attachments/${row.id}`), { code: 'BAD_REQUEST', msg: 'Invalid attachment' })
    const used = (await services.prisma.attachment.aggregate({ where: { realmId: fx.realm.id }, _sum: { size: true } }))._sum.size ?? 0
    const events = await captureEvents(app, member, async () => expectSuccess(t, await as(app, member).delete(`/attachments/${row.id}`)))
    t.same(events, [{ type: 'attachment', op: 'remove', attachment: { id: row.id }, upload_space_used: used - 3, id: events[0]?.id }])
    t.equal(await services.prisma.attachment.count({ where: { id: row.id } }), 0)
    const file = await app.inject({ method: 'GET', url, headers: { authorization: basicAuth(member.deliveryEmail, member.apiKey), host: hostOf(member) } })
    t.equal(file.statusCode, 404)
    expectError(t, await as(app, member).delete(`/attachments/${row.id}`), { code: 'BAD_REQUEST', msg: 'Invalid attachment' })
    expectError(t, await as(app, member).delete('/attachments/abc'), { code: 'BAD_REQUEST', msg: /attachment_id/ })
  })

  t.test('PATCH /messages/{id} answers detached_uploads (level 285): my uploads the edit left linked from no message', async (t) => {
    const kept = await upload(t, app, member, 'kept.txt', 'kept')
    const dropped = await upload(t, app, member, 'dropped.txt', 'dropped')
    const shared = await upload(t, app, member, 'shared.txt', 'shared')
    const id = await send(t, app, member, { type: 'stream', to: 'general', topic: 'detach', content: `[a](${kept}) [b](${dropped}) [c](${shared})` })
    await send(t, app, member, { type: 'stream', to: 'general', topic: 'detach', content: `also [c](${shared})` })
    const edited = expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: `only [a](${kept})` }))
    const row = await services.prisma.attachment.findFirstOrThrow({ where: { ownerId: member.id, fileName: 'dropped.txt' } })
    t.same(edited, {
      result: 'success',
      msg: '',
      detached_uploads: [{ id: row.id, name: 'dropped.txt', path_id: row.pathId, size: 7, create_time: row.createdAt.getTime(), messages: [] }],
    }, 'not the one still linked from another message')
    const listed = expectSuccess(t, await as(app, member).get('/attachments')).attachments as { name: string; messages: { id: number }[] }[]
    t.same(listed.find((a) => a.name === 'dropped.txt')?.messages, [], 'the edited message no longer links it')
    t.same(listed.find((a) => a.name === 'kept.txt')?.messages.map((m) => m.id), [id])
    t.equal(listed.find((a) => a.name === 'shared.txt')?.messages.length, 1)
    t.same(expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { topic: 'moved' })), { result: 'success', msg: '', detached_uploads: [] }, 'a move detaches nothing')
  })

  t.test('linking and unlinking my upload sends attachment update events to me only, with its messages as they now are', async (t) => {
    const url = await upload(t, app, member, 'linked.txt', 'linked')
    const row = await services.prisma.attachment.findFirstOrThrow({ where: { ownerId: member.id, fileName: 'linked.txt' } })
    const used = (await services.prisma.attachment.aggregate({ where: { realmId: fx.realm.id }, _sum: { size: true } }))._sum.size ?? 0
    const dict = (messages: { id: number; date_sent: number }[]) => ({ id: row.id, name: 'linked.txt', path_id: row.pathId, size: 6, create_time: row.createdAt.getTime(), messages })
    const updates = (events: CapturedEvent[]) => events.filter((e) => e.type === 'attachment').map(({ id: _id, ...e }) => e)
    let id = 0
    const onSend = await captureEvents(app, member, async () => {
      id = await send(t, app, member, { type: 'stream', to: 'general', topic: 'linking', content: `[file](${url})` })
    })
    const sent = await services.prisma.message.findUniqueOrThrow({ where: { id } })
    t.same(updates(onSend), [{ type: 'attachment', op: 'update', attachment: dict([{ id, date_sent: sent.dateSent.getTime() }]), upload_space_used: used }])
    const otherSees = await captureEvents(app, otherMember, async () => {
      await send(t, app, member, { type: 'stream', to: 'general', topic: 'linking', content: `again [file](${url})` })
    })
    t.same(updates(otherSees), [], 'not to the readers of the message')
    const onEdit = await captureEvents(app, member, async () => expectSuccess(t, await as(app, member).patch(`/messages/${id}`, { content: 'no file now' })))
    const second = await services.prisma.message.findFirstOrThrow({ where: { senderId: member.id, content: `again [file](${url})` } })
    t.same(updates(onEdit), [{ type: 'attachment', op: 'update', attachment: dict([{ id: second.id, date_sent: second.dateSent.getTime() }]), upload_space_used: used }])
    const noLink = await captureEvents(app, member, async () => {
      await send(t, app, member, { type: 'stream', to: 'general', topic: 'linking', content: 'plain text' })
    })
    t.same(updates(noLink), [], 'none for a message that links no upload')
    const theirs = await captureEvents(app, member, async () => {
      await send(t, app, otherMember, { type: 'stream', to: 'general', topic: 'linking', content: `their link [file](${url})` })
    })
    t.same(updates(theirs), [], "another user's link claims nothing")
  })

  t.test('a temporary URL works without credentials for a minute, for those allowed to read the file', async (t) => {
    const url = await upload(t, app, member, 'shared notes.txt', 'shared!')
    await send(t, app, member, { type: 'stream', to: 'secret', topic: 'files', content: `[notes](${url})` })
    const path = url.slice('/user_uploads/'.length)
    const minted = expectSuccess(t, await as(app, owner).get(`/user_uploads/${path}`))
    t.match(minted.url, /^\/user_uploads\/temporary\/\d+\.\d+\.\d+\.[A-Za-z0-9_-]{22}\/shared-notes\.txt$/)
    const file = await app.inject({ method: 'GET', url: minted.url, headers: { host: fx.host } })
    t.equal(file.statusCode, 200)
    t.equal(file.body, 'shared!')
    t.match(file.headers['content-disposition'], /filename\*=UTF-8''shared-notes\.txt/)

    // Not subscribed to the private channel: no URL.
    expectError(t, await as(app, otherMember).get(`/user_uploads/${path}`), { code: 'BAD_REQUEST', status: 403 })
    expectError(t, await as(app, guest).get(`/user_uploads/${path}`), { code: 'BAD_REQUEST', status: 403 })
    expectError(t, await as(app, owner).get(`/user_uploads/${fx.realm.id}/00/nope/x.txt`), { code: 'NOT_FOUND', status: 404 })

    // Tampering, expiry, another organization.
    const [, , , token] = (minted.url as string).split('/')
    const forged = `${token?.split('.').slice(0, 3).join('.')}.${'A'.repeat(22)}`
    t.equal((await app.inject({ method: 'GET', url: `/user_uploads/temporary/${forged}/x.txt`, headers: { host: fx.host } })).statusCode, 404)
    t.equal((await app.inject({ method: 'GET', url: '/user_uploads/temporary/garbage/x.txt', headers: { host: fx.host } })).statusCode, 404)
    const realNow = services.now
    services.now = () => new Date(realNow().getTime() + 61_000)
    t.teardown(() => {
      services.now = realNow
    })
    t.equal((await app.inject({ method: 'GET', url: minted.url, headers: { host: fx.host } })).statusCode, 404, 'expired after 60 s')
    services.now = realNow
    const other = await buildTestApp(t, { config: { dataDir } })
    t.equal((await app.inject({ method: 'GET', url: minted.url, headers: { host: other.fx.host } })).statusCode, 404, 'not on another realm')
    expectError(t, await as(other.app, other.fx.users.owner).get(`/user_uploads/${path}`), { code: 'NOT_FOUND', status: 404 })

    // A new API key revokes the user's URLs.
    await services.prisma.user.update({ where: { id: owner.id }, data: { apiKey: 'x'.repeat(32) } })
    t.equal((await app.inject({ method: 'GET', url: minted.url, headers: { host: fx.host } })).statusCode, 404, 'revoked with the key')
  })
})
