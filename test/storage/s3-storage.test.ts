// The FileStorage contract against a real S3-compatible server (s3rver, run as
// its own process by s3-server.ts), plus what only S3 has: check() reaching
// the bucket, and objects stored where any S3 client finds them.
import t from 'tap'
import { createServer } from 'node:net'
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { loadConfig } from '../../src/config.js'
import { createStorage } from '../../src/storage/create-storage.js'
import { S3FileStorage } from '../../src/storage/s3-storage.js'
import { fileStorageContract } from './file-storage.contract.js'
import { startS3Server } from './s3-server.js'

/** A port nothing listens on: bound once by us, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      const port = typeof address === 'object' && address ? address.port : 0
      probe.close(() => resolve(port))
    })
  })
}

t.test('S3FileStorage', async (t) => {
  const server = await startS3Server(t)

  fileStorageContract(t, async () => new S3FileStorage(await server.newBucket()))

  t.test('stores objects in the bucket, under the key, with the content type, for any S3 client', async (t) => {
    const settings = await server.newBucket()
    await new S3FileStorage(settings).put('7/ab/token/photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'image/png')
    const other = new S3Client({ endpoint: settings.endpoint, region: settings.region, forcePathStyle: true, credentials: settings })
    t.teardown(() => other.destroy())
    const out = await other.send(new GetObjectCommand({ Bucket: settings.bucket, Key: '7/ab/token/photo.png' }))
    t.equal(out.ContentType, 'image/png')
    t.same([...((await out.Body?.transformToByteArray()) ?? [])], [0x89, 0x50, 0x4e, 0x47])
  })

  t.test('buckets are separate: a key stored in one is missing from another', async (t) => {
    const a = new S3FileStorage(await server.newBucket())
    const b = new S3FileStorage(await server.newBucket())
    await a.put('7/ab/token/a.txt', Buffer.from('a'), 'text/plain')
    t.equal(await b.get('7/ab/token/a.txt'), null)
  })

  t.test('check() fails, naming the bucket and the variables, when the bucket does not exist', async (t) => {
    const settings = server.missingBucket()
    await t.rejects(new S3FileStorage(settings).check(), { message: `S3 bucket '${settings.bucket}' at ${settings.endpoint} (S3_BUCKET, S3_ENDPOINT) cannot be used: no such bucket` })
  })

  t.test('check() fails when the credentials are wrong', async (t) => {
    const settings = { ...(await server.newBucket()), accessKeyId: 'WRONG', secretAccessKey: 'wrong-secret' }
    await t.rejects(new S3FileStorage(settings).check(), { message: /cannot be used: access denied \(check S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY\)$/ })
    await t.rejects(new S3FileStorage(settings).put('7/ab/token/a.txt', Buffer.from('x'), 'text/plain'))
  })

  t.test('check() fails when nothing listens at the endpoint', async (t) => {
    const settings = { ...(await server.newBucket()), endpoint: `http://127.0.0.1:${await closedPort()}` }
    await t.rejects(new S3FileStorage(settings).check(), { message: /^S3 bucket '.+' at http:\/\/127\.0\.0\.1:\d+ \(S3_BUCKET, S3_ENDPOINT\) cannot be used: / })
  })

  t.test('createStorage() uses S3 when the S3_* variables are set', async (t) => {
    const settings = await server.newBucket()
    const config = loadConfig({
      S3_ENDPOINT: settings.endpoint,
      S3_BUCKET: settings.bucket,
      S3_REGION: settings.region,
      S3_ACCESS_KEY_ID: settings.accessKeyId,
      S3_SECRET_ACCESS_KEY: settings.secretAccessKey,
    })
    const storage = createStorage(config)
    t.ok(storage instanceof S3FileStorage)
    await storage.check()
    await storage.put('7/ab/token/a.txt', Buffer.from('via config'), 'text/plain')
    t.equal((await new S3FileStorage(settings).get('7/ab/token/a.txt'))?.data.toString('utf8'), 'via config')
  })
})
