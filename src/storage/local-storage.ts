// Uploads as files under one directory. Keys are checked so that no key can
// name a path outside it.
import { mkdir, readFile, rm, writeFile, rename } from 'node:fs/promises'
import { dirname, resolve, sep } from 'node:path'
import { randomUUID } from 'node:crypto'
import type { FileStorage, StoredFile } from './file-storage.js'

const TYPE_SUFFIX = '.content-type'

export class LocalFileStorage implements FileStorage {
  private readonly root: string

  constructor(root: string) {
    this.root = resolve(root)
  }

  private pathOf(key: string): string {
    const parts = key.split('/')
    if (key === '' || parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\') || p.includes('\0'))) {
      throw new Error(`invalid storage key '${key}'`)
    }
    const full = resolve(this.root, ...parts)
    if (!full.startsWith(this.root + sep)) throw new Error(`invalid storage key '${key}'`)
    return full
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    const path = this.pathOf(key)
    await mkdir(dirname(path), { recursive: true })
    // Write then rename, so a reader never sees half a file.
    const temp = `${path}.${randomUUID()}.tmp`
    await writeFile(temp, data)
    await writeFile(path + TYPE_SUFFIX, contentType)
    await rename(temp, path)
  }

  async get(key: string): Promise<StoredFile | null> {
    const path = this.pathOf(key)
    try {
      const data = await readFile(path)
      const contentType = await readFile(path + TYPE_SUFFIX, 'utf8').catch(() => 'application/octet-stream')
      return { data, contentType }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true })
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key)
    await rm(path, { force: true })
    await rm(path + TYPE_SUFFIX, { force: true })
  }
}
