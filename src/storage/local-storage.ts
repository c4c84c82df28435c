// Uploads as files under one directory. Keys are checked so that no key can
// name a path outside it. A key's last component may be as long as the file
// system allows (255 bytes): the temporary file and the content-type file
// next to it get names that fit, and a failed put() or a delete() leaves no
// empty directory behind.
import { mkdir, readFile, readdir, rm, rmdir, writeFile, rename } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import { createHash, randomUUID } from 'node:crypto'
import type { FileStorage, StoredFile } from './file-storage.js'

const TYPE_SUFFIX = '.content-type'
/** put()'s temporary files: ".<uuid>.tmp". */
const TEMPORARY = /^\.[0-9a-f-]{36}\.tmp$/
/** The longest file name (one path component) in bytes on common Linux file systems. */
const MAX_NAME_BYTES = 255

/** Where a file's content type is kept: beside it, under a short hashed name when "<name>.content-type" would be too long. */
function typePathOf(path: string): string {
  const name = basename(path)
  if (Buffer.byteLength(name + TYPE_SUFFIX) <= MAX_NAME_BYTES) return path + TYPE_SUFFIX
  return join(dirname(path), `.${createHash('sha256').update(name).digest('hex')}${TYPE_SUFFIX}`)
}

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
    const temp = join(dirname(path), `.${randomUUID()}.tmp`)
    try {
      await writeFile(temp, data)
      await writeFile(typePathOf(path), contentType)
      await rename(temp, path)
    } catch (error) {
      await rm(temp, { force: true })
      await rm(typePathOf(path), { force: true })
      await this.pruneEmptyDirectories(dirname(path))
      throw error
    }
  }

  async get(key: string): Promise<StoredFile | null> {
    const path = this.pathOf(key)
    try {
      const data = await readFile(path)
      const contentType = await readFile(typePathOf(path), 'utf8').catch(() => 'application/octet-stream')
      return { data, contentType }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true })
  }

  /** The files under the root, without their content-type companions and unfinished temporary files. */
  async *keys(): AsyncIterable<string> {
    const pending = [this.root]
    for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
      let entries
      try {
        entries = await readdir(dir, { withFileTypes: true })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue
        throw error
      }
      const files = entries.filter((e) => e.isFile()).map((e) => e.name)
      const companions = new Set(files.map((name) => basename(typePathOf(join(dir, name)))))
      for (const name of files) {
        if (companions.has(name) || TEMPORARY.test(name)) continue
        yield relative(this.root, join(dir, name)).split(sep).join('/')
      }
      for (const e of entries) if (e.isDirectory()) pending.push(join(dir, e.name))
    }
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key)
    await rm(path, { force: true })
    await rm(typePathOf(path), { force: true })
    await this.pruneEmptyDirectories(dirname(path))
  }

  /** Removes `dir` and its parents up to the root while they are empty (a concurrent upload's directory is never empty, so it stays). */
  private async pruneEmptyDirectories(dir: string): Promise<void> {
    for (let current = dir; current.startsWith(this.root + sep); current = dirname(current)) {
      try {
        await rmdir(current)
      } catch {
        return // not empty, or already gone
      }
    }
  }
}
