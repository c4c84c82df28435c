// Uploads with config.s3 set: POST /user_uploads and GET of the returned URL,
// the file going through a real S3-compatible server (s3rver, its own process,
// started by test/storage/s3-server.ts). The access rules are those of
// uploads.test.ts; here they are checked once more with S3 behind them. The
// multipart helpers are small copies of that file's, which exports nothing.
import t from 'tap'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import { buildTestApp } from '../support/app.js'
import { as, basicAuth } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import type { User } from '../../src/db/index.js'
import { startS3Server } from '../storage/s3-server.js'

interface FilePart {
  fileName: string
  contentType: string
  data: Buffer | string
}

const hostOf = (user: User) => `${(user.deliveryEmail.split('@')[1] ?? '').replace('.example.com', '')}.localhost`

function upload(app: FastifyInstance, user: User, file: FilePart) {
  const boundary = `----roost${randomBytes(8).toString('hex')}`
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.fileName}"\r\nContent-Type: ${file.contentType}\r\n\r\n`
  const payload = Buffer.concat([Buffer.from(head), Buffer.from(file.data), Buffer.from(`\r\n--${boundary}--\r\n`)])
  return app.inject({
    method: 'POST',
    url: '/api/v1/user_uploads',
    headers: { authorization: basicAuth(user.deliveryEmail, user.apiKey), host: hostOf(user), 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload,
  })
}

function fetchFile(app: FastifyInstance, user: User | undefined, url: string) {
  return app.inject({ method: 'GET', url, headers: user ? { authorization: basicAuth(user.deliveryEmail, user.apiKey), host: hostOf(user) } : {} })
}

/** The storage key of an upload URL: the path after /user_uploads/, decoded. */
const keyOf = (url: string) => decodeURIComponent(url.slice('/user_uploads/'.length))

t.test('uploads stored in S3', async (t) => {
  const server = await startS3Server(t)
  const s3Settings = await server.newBucket()
  const dataDir = await mkdtemp(join(tmpdir(), 'roost-uploads-s3-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const { app, fx } = await buildTestApp(t, { config: { dataDir, s3: s3Settings, maxFileUploadSizeMib: 1 } })
  const { owner, member, otherMember, guest } = fx.users

  // An independent client: proves where the bytes are, not only that the app reads them back.
  const bucket = new S3Client({ endpoint: s3Settings.endpoint, region: s3Settings.region, forcePathStyle: true, credentials: s3Settings })
  t.teardown(() => bucket.destroy())
  const objectKeys = async () => ((await bucket.send(new ListObjectsV2Command({ Bucket: s3Settings.bucket }))).Contents ?? []).map((o) => o.Key ?? '').sort()

  t.test('POST /user_uploads puts the file in the bucket under its path, and GET of the url returns it', async (t) => {
    const data = randomBytes(300 * 1024)
    const res = await upload(app, member, { fileName: 'photo.png', contentType: 'image/png', data })
    const { url, uri } = expectSuccess(t, res)
    t.match(url, new RegExp(`^/user_uploads/${fx.realm.id}/[0-9a-f]{2}/[A-Za-z0-9_-]{24}/photo\\.png$`))
    t.equal(uri, url)

    const object = await bucket.send(new GetObjectCommand({ Bucket: s3Settings.bucket, Key: keyOf(url) }))
    t.equal(object.ContentType, 'image/png')
    t.ok(Buffer.from((await object.Body?.transformToByteArray()) ?? []).equals(data), 'the bucket holds the uploaded bytes')

    const file = await fetchFile(app, member, url)
    t.equal(file.statusCode, 200)
    t.equal(file.headers['content-type'], 'image/png')
    t.match(file.headers['content-disposition'], /^inline;/)
    t.ok(file.rawPayload.equals(data), 'GET returns the uploaded bytes')
  })

  t.test('a non-ASCII file name round-trips through the bucket', async (t) => {
    const { url } = expectSuccess(t, await upload(app, member, { fileName: 'été 日本.txt', contentType: 'text/plain', data: 'bonjour' }))
    t.match(url, /\/%C3%A9t%C3%A9-%E6%97%A5%E6%9C%AC\.txt$/)
    t.ok((await objectKeys()).includes(keyOf(url)))
    t.equal((await fetchFile(app, member, url)).body, 'bonjour')
  })

  t.test('writes nothing under DATA_DIR', async (t) => {
    t.notOk((await readdir(dataDir)).includes('uploads'))
  })

  t.test('an unlinked file is for the uploader only', async (t) => {
    const { url } = expectSuccess(t, await upload(app, member, { fileName: 'private.txt', contentType: 'text/plain', data: 'mine' }))
    t.equal((await fetchFile(app, member, url)).body, 'mine')
    for (const user of [otherMember, owner, guest]) {
      expectError(t, await fetchFile(app, user, url), { code: 'BAD_REQUEST', status: 403, msg: 'You are not authorized to view this file.' })
    }
    expectError(t, await fetchFile(app, undefined, url), { code: 'UNAUTHORIZED', status: 401 })
  })

  t.test('sending a message that links the upload lets its readers fetch it from the bucket', async (t) => {
    const { url } = expectSuccess(t, await upload(app, member, { fileName: 'shared.txt', contentType: 'text/plain', data: 'via message' }))
    expectError(t, await fetchFile(app, otherMember, url), { code: 'BAD_REQUEST', status: 403 })
    expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'design', topic: 'files', content: `[shared.txt](${url})` }))
    t.equal((await fetchFile(app, otherMember, url)).body, 'via message')
    expectError(t, await fetchFile(app, guest, url), { code: 'BAD_REQUEST', status: 403 })
  })

  t.test('a file gone from the bucket is not found', async (t) => {
    const { url } = expectSuccess(t, await upload(app, member, { fileName: 'gone.txt', contentType: 'text/plain', data: 'soon gone' }))
    await bucket.send(new DeleteObjectCommand({ Bucket: s3Settings.bucket, Key: keyOf(url) }))
    expectError(t, await fetchFile(app, member, url), { code: 'NOT_FOUND', status: 404, msg: 'File not found' })
  })

  t.test('a file over MAX_FILE_UPLOAD_SIZE never reaches the bucket', async (t) => {
    const before = await objectKeys()
    expectError(t, await upload(app, otherMember, { fileName: 'big.bin', contentType: 'application/octet-stream', data: Buffer.alloc(1024 * 1024 + 10, 1) }), {
      code: 'BAD_REQUEST', status: 400, msg: 'Uploaded file is larger than the allowed limit of 1 MiB',
    })
    t.same(await objectKeys(), before)
  })
})
