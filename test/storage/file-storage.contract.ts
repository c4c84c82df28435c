// One suite for the FileStorage interface, run against local disk
// (local-storage.test.ts) and a real S3-compatible server (s3-storage.test.ts).
// Keys are shaped as upload-file.ts makes them: "<realm>/<hex>/<token>/<name>".
import { randomBytes } from 'node:crypto'
import type { Test } from 'tap'
import type { FileStorage } from '../../src/storage/file-storage.js'

/** A fresh, empty storage for one test. */
export type MakeStorage = (t: Test) => Promise<FileStorage>

const key = (name: string) => `7/${randomBytes(1).toString('hex')}/${randomBytes(18).toString('base64url')}/${name}`

export function fileStorageContract(t: Test, make: MakeStorage): void {
  t.test('check() succeeds on a usable storage', async (t) => {
    const storage = await make(t)
    await t.resolves(storage.check())
  })

  t.test('get() returns what put() stored, with its content type', async (t) => {
    const storage = await make(t)
    const k = key('notes.txt')
    await storage.put(k, Buffer.from('hello file'), 'text/plain')
    const file = await storage.get(k)
    t.equal(file?.data.toString('utf8'), 'hello file')
    t.equal(file?.contentType, 'text/plain')
  })

  t.test('keeps content types with parameters and unusual types as given', async (t) => {
    const storage = await make(t)
    for (const type of ['text/plain; charset=utf-8', 'image/png', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'application/octet-stream']) {
      const k = key('file.bin')
      await storage.put(k, Buffer.from('x'), type)
      t.equal((await storage.get(k))?.contentType, type, type)
    }
  })

  t.test('binary data round-trips byte for byte', async (t) => {
    const storage = await make(t)
    const everyByte = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
    const large = randomBytes(3 * 1024 * 1024 + 17)
    const cases: [string, Buffer][] = [['every-byte.bin', everyByte], ['large.bin', large], ['crlf.txt', Buffer.from('a\r\nb\n\0c')]]
    for (const [name, data] of cases) {
      const k = key(name)
      await storage.put(k, data, 'application/octet-stream')
      const file = await storage.get(k)
      t.ok(file && Buffer.isBuffer(file.data), `${name} is a Buffer`)
      t.equal(file?.data.length, data.length, `${name} length`)
      t.ok(file?.data.equals(data), `${name} bytes`)
    }
  })

  t.test('stores an empty file', async (t) => {
    const storage = await make(t)
    const k = key('empty.txt')
    await storage.put(k, Buffer.alloc(0), 'text/plain')
    const file = await storage.get(k)
    t.not(file, null)
    t.equal(file?.data.length, 0)
    t.equal(file?.contentType, 'text/plain')
  })

  t.test('keys with non-ASCII letters, dots and dashes name distinct files', async (t) => {
    const storage = await make(t)
    const prefix = key('')
    const names = ['été.png', 'my-file-1.txt', 'archive.tar.gz', '日本語.pdf', 'uploaded-file', 'a', 'a.txt']
    for (const name of names) await storage.put(prefix + name, Buffer.from(`content of ${name}`), 'text/plain')
    for (const name of names) t.equal((await storage.get(prefix + name))?.data.toString('utf8'), `content of ${name}`, name)
  })

  t.test('keys() lists every stored file once, deleted ones not', async (t) => {
    const storage = await make(t)
    const list = async () => {
      const found: string[] = []
      for await (const k of storage.keys()) found.push(k)
      return found.sort()
    }
    t.same(await list(), [], 'empty at first')
    const stored = [key('a.txt'), key('日本語.pdf'), key('x.content-type'), key('notes.txt'), key('gone.txt')]
    for (const k of stored) await storage.put(k, Buffer.from(k), 'text/plain')
    await storage.delete(stored[4]!)
    t.same(await list(), stored.slice(0, 4).sort())
    for (const k of await list()) t.equal((await storage.get(k))?.data.toString('utf8'), k, `${k} reads back`)
  })

  t.test('get() of a key never stored returns null', async (t) => {
    const storage = await make(t)
    t.equal(await storage.get(key('never.txt')), null)
  })

  t.test('put() replaces the file and the content type under an existing key', async (t) => {
    const storage = await make(t)
    const k = key('replaced.txt')
    await storage.put(k, Buffer.from('first version, longer'), 'text/plain')
    await storage.put(k, Buffer.from('second'), 'text/markdown')
    const file = await storage.get(k)
    t.equal(file?.data.toString('utf8'), 'second')
    t.equal(file?.contentType, 'text/markdown')
  })

  t.test('delete() removes the file and leaves the others', async (t) => {
    const storage = await make(t)
    const gone = key('gone.txt')
    const kept = key('kept.txt')
    await storage.put(gone, Buffer.from('gone'), 'text/plain')
    await storage.put(kept, Buffer.from('kept'), 'text/plain')
    await storage.delete(gone)
    t.equal(await storage.get(gone), null)
    t.equal((await storage.get(kept))?.data.toString('utf8'), 'kept')
  })

  t.test('delete() of a missing key is not an error', async (t) => {
    const storage = await make(t)
    const k = key('twice.txt')
    await t.resolves(storage.delete(k))
    await storage.put(k, Buffer.from('x'), 'text/plain')
    await storage.delete(k)
    await t.resolves(storage.delete(k))
    t.equal(await storage.get(k), null)
  })

  t.test('a key can be stored again after it was deleted', async (t) => {
    const storage = await make(t)
    const k = key('again.txt')
    await storage.put(k, Buffer.from('one'), 'text/plain')
    await storage.delete(k)
    await storage.put(k, Buffer.from('two'), 'image/png')
    const file = await storage.get(k)
    t.equal(file?.data.toString('utf8'), 'two')
    t.equal(file?.contentType, 'image/png')
  })

  t.test('concurrent puts of different keys all land', async (t) => {
    const storage = await make(t)
    const keys = Array.from({ length: 20 }, (_, i) => key(`file-${i}.txt`))
    await Promise.all(keys.map((k, i) => storage.put(k, Buffer.from(`file ${i}`), 'text/plain')))
    const files = await Promise.all(keys.map((k) => storage.get(k)))
    t.same(files.map((f) => f?.data.toString('utf8')), keys.map((_, i) => `file ${i}`))
  })
}
