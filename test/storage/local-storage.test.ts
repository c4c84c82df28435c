import t from 'tap'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
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

  t.test('createStorage() uses DATA_DIR/uploads when no S3_* variable is set', async (t) => {
    const dataDir = await tempDir(t)
    const storage = createStorage({ ...loadConfig({}), dataDir })
    t.ok(storage instanceof LocalFileStorage)
    await storage.put('7/ab/token/a.txt', Buffer.from('x'), 'text/plain')
    t.ok((await stat(join(dataDir, 'uploads', '7', 'ab', 'token', 'a.txt'))).isFile())
  })
})
