import t from 'tap'
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LocalFileStorage } from '../../src/storage/local-storage.js'
import { createStorage } from '../../src/storage/create-storage.js'
import { loadConfig } from '../../src/config.js'
import { fileStorageContract } from './file-storage.contract.js'

async function tempDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'roost-storage-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

t.test('LocalFileStorage', async (t) => {
  fileStorageContract(t, async (t) => new LocalFileStorage(join(await tempDir(t), 'uploads')))

  t.test('check() creates the directory', async (t) => {
    const root = join(await tempDir(t), 'not', 'yet', 'there')
    await new LocalFileStorage(root).check()
    t.ok((await stat(root)).isDirectory())
  })

  t.test('refuses keys that could name a path outside its directory', async (t) => {
    const dir = await tempDir(t)
    const storage = new LocalFileStorage(join(dir, 'uploads'))
    for (const bad of ['', '../outside.txt', '7/../../outside.txt', '/etc/passwd', '7//a.txt', '7/./a.txt', '7/a\\..\\..\\b', '7/a\0b']) {
      await t.rejects(storage.put(bad, Buffer.from('x'), 'text/plain'), /invalid storage key/, `put ${JSON.stringify(bad)}`)
      await t.rejects(storage.get(bad), /invalid storage key/, `get ${JSON.stringify(bad)}`)
      await t.rejects(storage.delete(bad), /invalid storage key/, `delete ${JSON.stringify(bad)}`)
    }
    t.same(await readdir(dir), [])
  })

  t.test('keys() skips content-type companions (hashed ones of long names too) and unfinished temporary files', async (t) => {
    const dir = await tempDir(t)
    const storage = new LocalFileStorage(join(dir, 'uploads'))
    const long = `7/ab/long/${'n'.repeat(250)}.txt`
    await storage.put(long, Buffer.from('long'), 'text/plain')
    await storage.put('7/cd/short/a.txt', Buffer.from('short'), 'text/plain')
    await writeFile(join(dir, 'uploads', '7', 'cd', 'short', `.${randomUUID()}.tmp`), 'half written')
    const keys: string[] = []
    for await (const k of storage.keys()) keys.push(k)
    t.same(keys.sort(), ['7/ab/long/' + 'n'.repeat(250) + '.txt', '7/cd/short/a.txt'])
    t.equal((await readdir(join(dir, 'uploads', '7', 'ab', 'long'))).length, 2, 'the long name has its hashed companion beside it')
    const none = new LocalFileStorage(join(dir, 'never-created'))
    for await (const k of none.keys()) t.fail(`no key expected, got ${k}`)
  })

  t.test('createStorage() uses DATA_DIR/uploads when no S3_* variable is set', async (t) => {
    const dataDir = await tempDir(t)
    const storage = createStorage({ ...loadConfig({}), dataDir })
    t.ok(storage instanceof LocalFileStorage)
    await storage.put('7/ab/token/a.txt', Buffer.from('x'), 'text/plain')
    t.ok((await stat(join(dataDir, 'uploads', '7', 'ab', 'token', 'a.txt'))).isFile())
  })
})
