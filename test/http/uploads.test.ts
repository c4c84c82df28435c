import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, type Fixture } from '../support/app.js'
import { as, basicAuth } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import type { Services } from '../../src/services.js'
import type { BusItem } from '../../src/events/bus.js'
import type { User } from '../../src/db/index.js'

interface Part {
  name: string
  fileName?: string
  contentType?: string
  data: Buffer | string
}

function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----roost${Math.random().toString(16).slice(2)}`
  const chunks: Buffer[] = []
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.fileName !== undefined ? `; filename="${part.fileName}"` : ''}`
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.fileName !== undefined ? `Content-Type: ${part.contentType ?? 'application/octet-stream'}\r\n` : ''}\r\n`
    chunks.push(Buffer.from(head), Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data), Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` }
}

const hostOf = (user: User) => `${(user.deliveryEmail.split('@')[1] ?? '').replace('.example.com', '')}.localhost`

function upload(app: FastifyInstance, user: User, parts: Part[]) {
  const { body, contentType } = multipart(parts)
  return app.inject({
    method: 'POST',
    url: '/api/v1/user_uploads',
    headers: { authorization: basicAuth(user.deliveryEmail, user.apiKey), host: hostOf(user), 'content-type': contentType },
    payload: body,
  })
}

function fetchFile(app: FastifyInstance, user: User | undefined, url: string) {
  return app.inject({
    method: 'GET',
    url,
    headers: user ? { authorization: basicAuth(user.deliveryEmail, user.apiKey), host: hostOf(user) } : {},
  })
}

async function linkToMessage(services: Services, fx: Fixture, url: string, message: { sender: User; streamId?: number; recipients?: User[] }): Promise<void> {
  const pathId = decodeURIComponent(url.slice('/user_uploads/'.length))
  const attachment = await services.prisma.attachment.findUniqueOrThrow({ where: { pathId } })
  const msg = await services.prisma.message.create({
    data: {
      realmId: fx.realm.id,
      senderId: message.sender.id,
      streamId: message.streamId ?? null,
      topic: message.streamId ? 'files' : '',
      dmUserIds: message.recipients ? [message.sender.id, ...message.recipients.map((u) => u.id)].sort((a, b) => a - b) : [],
      content: `[file](${url})`,
      renderedContent: `<p><a href="${url}">file</a></p>`,
      dateSent: new Date(),
      hasAttachment: true,
    },
  })
  await services.prisma.attachmentMessage.create({ data: { attachmentId: attachment.id, messageId: msg.id } })
  const receivers = [message.sender, ...(message.recipients ?? [])]
  await services.prisma.userMessage.createMany({ data: receivers.map((u) => ({ userId: u.id, messageId: msg.id })), skipDuplicates: true })
}

t.test('uploads', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'roost-uploads-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const { app, fx, services } = await buildTestApp(t, { config: { dataDir, maxFileUploadSizeMib: 1 } })
  const { owner, member, otherMember, guest } = fx.users

  t.test('POST /user_uploads stores one file under any part name and returns url and uri', async (t) => {
    const items: BusItem[] = []
    const off = services.bus.subscribe((item) => { if (item.event.type === 'attachment') items.push(item) })
    const res = await upload(app, member, [{ name: 'whatever', fileName: 'notes.txt', contentType: 'text/plain', data: 'hello file' }])
    await new Promise((resolve) => setImmediate(resolve))
    off()
    const body = expectSuccess(t, res)
    t.match(body.url, new RegExp(`^/user_uploads/${fx.realm.id}/[0-9a-f]{2}/[A-Za-z0-9_-]{24}/notes\\.txt$`))
    t.same(body, { result: 'success', msg: '', uri: body.url, url: body.url, filename: 'notes.txt' })
    const file = await fetchFile(app, member, body.url)
    t.equal(file.statusCode, 200)
    t.equal(file.body, 'hello file')
    t.match(file.headers['content-type'], /^text\/plain/)
    t.match(file.headers['content-disposition'], /^inline;/)
    t.equal(file.headers['cache-control'], 'private, immutable')
    const row = await services.prisma.attachment.findFirstOrThrow({ where: { ownerId: member.id, fileName: 'notes.txt' } })
    t.equal(row.size, 10)
    t.match(items, [{ userIds: [member.id], event: { type: 'attachment', op: 'add', attachment: { id: row.id, name: 'notes.txt', size: 10, messages: [] } } }])
  })

  t.test('sanitizes the file name (no path traversal)', async (t) => {
    const cases: [string, RegExp][] = [
      ['../../etc/passwd', /\/[A-Za-z0-9_-]{24}\/passwd$/],
      ['a/../..', /\/uploaded-file$/],
      ['my file (1).txt', /\/my-file-1\.txt$/],
      ['..', /\/uploaded-file$/],
      ['été.png', /\/%C3%A9t%C3%A9\.png$/],
    ]
    for (const [name, expected] of cases) {
      const body = expectSuccess(t, await upload(app, member, [{ name: 'file', fileName: name, data: 'x' }]))
      t.match(body.url, expected, name)
      t.equal((await fetchFile(app, member, body.url)).statusCode, 200, `fetch ${name}`)
    }
  })

  t.test('filename (level 286): the name as given, percent-decoded, where the URL has the sanitized name', async (t) => {
    const cases: [string, string, RegExp][] = [
      ['my file (1).txt', 'my file (1).txt', /\/my-file-1\.txt$/],
      ['été.png', 'été.png', /\/%C3%A9t%C3%A9\.png$/],
      ['half%20moon.txt', 'half moon.txt', /\/half20moon\.txt$/],
      ['100%.txt', '100%.txt', /\/100\.txt$/],
    ]
    for (const [name, filename, url] of cases) {
      const body = expectSuccess(t, await upload(app, member, [{ name: 'file', fileName: name, data: 'x' }]))
      t.equal(body.filename, filename, name)
      t.match(body.url, url, name)
    }
  })

  t.test('rejects a request without a file, and more than one file', async (t) => {
    expectError(t, await as(app, member).post('/user_uploads', {}), { code: 'BAD_REQUEST', status: 400, msg: 'You must specify a file to upload' })
    expectError(t, await upload(app, member, [{ name: 'note', data: 'just a field' }]), { code: 'BAD_REQUEST', status: 400, msg: 'You must specify a file to upload' })
    expectError(t, await upload(app, member, [{ name: 'a', fileName: 'a.txt', data: 'a' }, { name: 'b', fileName: 'b.txt', data: 'b' }]), {
      code: 'BAD_REQUEST', status: 400, msg: 'You may only upload one file at a time',
    })
  })

  t.test('rejects a file over MAX_FILE_UPLOAD_SIZE and stores nothing', async (t) => {
    const before = await services.prisma.attachment.count({ where: { ownerId: otherMember.id } })
    const big = Buffer.alloc(1024 * 1024 + 10, 1)
    expectError(t, await upload(app, otherMember, [{ name: 'file', fileName: 'big.bin', data: big }]), {
      code: 'BAD_REQUEST', status: 400, msg: 'Uploaded file is larger than the allowed limit of 1 MiB',
    })
    t.equal(await services.prisma.attachment.count({ where: { ownerId: otherMember.id } }), before)
    expectSuccess(t, await upload(app, otherMember, [{ name: 'file', fileName: 'fits.bin', data: Buffer.alloc(1024 * 1024, 1) }]))
  })

  t.test('an unlinked file is for the uploader only', async (t) => {
    const { url } = expectSuccess(t, await upload(app, member, [{ name: 'file', fileName: 'private.txt', data: 'mine' }]))
    for (const user of [owner, otherMember, guest]) {
      expectError(t, await fetchFile(app, user, url), { code: 'BAD_REQUEST', status: 403, msg: 'You are not authorized to view this file.' })
    }
    expectError(t, await fetchFile(app, undefined, url), { code: 'UNAUTHORIZED', status: 401 })
  })

  t.test('a file linked in a public channel is for every member, not unsubscribed guests', async (t) => {
    const { url } = expectSuccess(t, await upload(app, member, [{ name: 'file', fileName: 'public.txt', data: 'shared' }]))
    await linkToMessage(services, fx, url, { sender: member, streamId: fx.streams.design.id })
    t.equal((await fetchFile(app, otherMember, url)).body, 'shared')
    t.equal((await fetchFile(app, owner, url)).statusCode, 200)
    expectError(t, await fetchFile(app, guest, url), { code: 'BAD_REQUEST', status: 403 })
  })

  t.test('a file linked in a private channel is for subscribers (shared history)', async (t) => {
    const { url } = expectSuccess(t, await upload(app, member, [{ name: 'file', fileName: 'secret.txt', data: 'hush' }]))
    await linkToMessage(services, fx, url, { sender: member, streamId: fx.streams.secret.id })
    await services.prisma.stream.update({ where: { id: fx.streams.secret.id }, data: { historyPublicToSubscribers: true } })
    t.equal((await fetchFile(app, owner, url)).statusCode, 200)
    expectError(t, await fetchFile(app, otherMember, url), { code: 'BAD_REQUEST', status: 403 })
  })

  t.test('a file linked in a direct message is for its recipients', async (t) => {
    const { url } = expectSuccess(t, await upload(app, member, [{ name: 'file', fileName: 'dm.txt', data: 'for you' }]))
    await linkToMessage(services, fx, url, { sender: member, recipients: [guest] })
    t.equal((await fetchFile(app, guest, url)).body, 'for you')
    expectError(t, await fetchFile(app, otherMember, url), { code: 'BAD_REQUEST', status: 403 })
  })

  t.test('sending a message that links an upload shares it with the message readers', async (t) => {
    const { url } = expectSuccess(t, await upload(app, member, [{ name: 'file', fileName: 'sent.txt', data: 'via message' }]))
    expectError(t, await fetchFile(app, otherMember, url), { code: 'BAD_REQUEST', status: 403 })
    expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'design', topic: 'files', content: `[sent.txt](${url})` }))
    t.equal((await fetchFile(app, otherMember, url)).body, 'via message')
  })

  t.test('deleting the linking message takes the access away again', async (t) => {
    const { url } = expectSuccess(t, await upload(app, member, [{ name: 'file', fileName: 'gone.txt', data: 'soon gone' }]))
    const { id } = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'design', topic: 'files', content: `[gone.txt](${url})` }))
    t.equal((await fetchFile(app, otherMember, url)).body, 'soon gone')
    expectSuccess(t, await as(app, owner).delete(`/messages/${id}`))
    expectError(t, await fetchFile(app, otherMember, url), { code: 'BAD_REQUEST', status: 403 })
    t.equal((await fetchFile(app, member, url)).body, 'soon gone', 'the uploader keeps it')
  })

  t.test("linking someone else's upload grants nothing", async (t) => {
    const { url } = expectSuccess(t, await upload(app, member, [{ name: 'file', fileName: 'notyours.txt', data: 'mine only' }]))
    expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'stream', to: 'design', topic: 'files', content: `[x](${url})` }))
    expectError(t, await fetchFile(app, owner, url), { code: 'BAD_REQUEST', status: 403 })
  })

  t.test('unknown paths and other realms are not found; HTML downloads instead of rendering', async (t) => {
    expectError(t, await fetchFile(app, member, `/user_uploads/${fx.realm.id}/00/nope/x.txt`), { code: 'NOT_FOUND', status: 404 })
    const { url } = expectSuccess(t, await upload(app, member, [{ name: 'file', fileName: 'page.html', contentType: 'text/html', data: '<script>1</script>' }]))
    const res = await fetchFile(app, member, url)
    t.match(res.headers['content-disposition'], /^attachment;/)
    t.equal(res.headers['x-content-type-options'], 'nosniff')
    const { app: app2, fx: fx2 } = await buildTestApp(t, { config: { dataDir } })
    const res2 = await fetchFile(app2, fx2.users.member, url)
    t.equal(res2.statusCode, 404)
    t.equal(bodyOf(res2).code, 'NOT_FOUND')
  })
})
