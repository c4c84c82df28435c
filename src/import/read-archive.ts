// Reads an archive to import (.tar.gz with `tar`, .zip with `yauzl`) into
// memory, refusing what a hostile or broken file could do: names that climb
// out (`..`, absolute paths, backslashes, NUL), links and devices, more
// entries or more uncompressed bytes than the limits (counted while the data
// streams in, never taken from headers), and corrupt or truncated data. The
// result maps each regular file's normalized path to its bytes; nothing is
// written to disk.
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Parser, type ReadEntry } from 'tar'
import yauzl from 'yauzl'

export interface ArchiveLimits {
  /** Total uncompressed bytes of all entries. */
  maxBytes: number
  /** Number of entries (files and directories). */
  maxEntries: number
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = { maxBytes: 1024 * 1024 * 1024, maxEntries: 100_000 }

/** A problem with the archive itself; the message names it. */
export class ArchiveError extends Error {
  override name = 'ArchiveError'
}

/** The entry's path, normalized, or an ArchiveError naming it. */
export function safeEntryPath(raw: string): string {
  const shown = JSON.stringify(raw)
  if (raw.includes('\0') || raw.includes('\\')) throw new ArchiveError(`the archive has an entry with a forbidden character in its name: ${shown}`)
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) throw new ArchiveError(`the archive has an entry with an absolute path: ${shown}`)
  const parts = raw.split('/').filter((p) => p !== '' && p !== '.')
  if (parts.includes('..')) throw new ArchiveError(`the archive has an entry whose path climbs out of it ('..'): ${shown}`)
  return parts.join('/')
}

class Budget {
  private bytes = 0
  private entries = 0
  constructor(private readonly limits: ArchiveLimits) {}
  entry(): void {
    if (++this.entries > this.limits.maxEntries) throw new ArchiveError(`the archive has more than ${this.limits.maxEntries} entries`)
  }
  take(n: number): void {
    this.bytes += n
    if (this.bytes > this.limits.maxBytes) throw new ArchiveError(`the archive holds more than ${this.limits.maxBytes} bytes uncompressed`)
  }
}

async function checkReadable(file: string): Promise<void> {
  const info = await stat(file).catch(() => null)
  if (!info || !info.isFile()) throw new ArchiveError(`no such file: ${file}`)
}

export async function readTarGz(file: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<Map<string, Buffer>> {
  await checkReadable(file)
  const budget = new Budget(limits)
  const files = new Map<string, Buffer>()
  return new Promise((resolve, reject) => {
    let failed = false
    const input = createReadStream(file)
    const fail = (error: unknown): void => {
      if (failed) return
      failed = true
      input.destroy()
      parser.removeAllListeners('data')
      reject(error instanceof ArchiveError ? error : new ArchiveError(`the archive is corrupt or truncated: ${error instanceof Error ? error.message : String(error)}`))
    }
    const onEntry = (entry: ReadEntry): void => {
      if (failed) return entry.resume()
      try {
        budget.entry()
        const name = safeEntryPath(entry.path)
        if (entry.type === 'Directory') return entry.resume()
        if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'ContiguousFile') {
          throw new ArchiveError(`the archive has an entry that is not a regular file (${entry.type}): ${JSON.stringify(entry.path)}`)
        }
        const chunks: Buffer[] = []
        entry.on('data', (chunk: Buffer) => {
          if (failed) return
          try {
            budget.take(chunk.length)
            chunks.push(chunk)
          } catch (error) {
            fail(error)
          }
        })
        entry.on('end', () => {
          if (!failed && name !== '') files.set(name, Buffer.concat(chunks))
        })
      } catch (error) {
        entry.resume()
        fail(error)
      }
    }
    const parser = new Parser({ strict: true, onReadEntry: onEntry })
    parser.on('error', fail)
    parser.on('warn', (code: string, message: string) => fail(new Error(`${code}: ${message}`)))
    parser.on('end', () => {
      if (failed) return
      if (files.size === 0) return fail(new ArchiveError('the archive is empty or not a .tar.gz'))
      resolve(files)
    })
    input.on('error', fail)
    input.pipe(parser)
  })
}

const S_IFMT = 0o170000
const S_IFREG = 0o100000
const S_IFDIR = 0o040000

export async function readZip(file: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<Map<string, Buffer>> {
  await checkReadable(file)
  const budget = new Budget(limits)
  const files = new Map<string, Buffer>()
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    // Names are decoded here as UTF-8, as upstream's Slack importer does (Slack's zips are UTF-8 without
    // the flag that says so) and checked by safeEntryPath; validateEntrySizes checks the data against the headers.
    yauzl.open(file, { lazyEntries: true, autoClose: true, decodeStrings: false, validateEntrySizes: true }, (error, zipFile) =>
      error ? reject(new ArchiveError(`the archive is not a readable .zip: ${error.message}`)) : resolve(zipFile),
    ),
  )
  return new Promise((resolve, reject) => {
    let failed = false
    const fail = (error: unknown): void => {
      if (failed) return
      failed = true
      zip.close()
      const message = error instanceof Error ? error.message : String(error)
      if (error instanceof ArchiveError) reject(error)
      else if (/invalid relative path|absolute path/.test(message)) reject(new ArchiveError(`the archive has an entry whose path climbs out of it: ${message}`))
      else reject(new ArchiveError(`the archive is corrupt or truncated: ${message}`))
    }
    zip.on('error', fail)
    zip.on('entry', (entry: yauzl.Entry) => {
      try {
        budget.entry()
        const rawName = (entry.fileName as unknown as Buffer).toString('utf8')
        const name = safeEntryPath(rawName)
        const mode = (entry.externalFileAttributes >>> 16) & S_IFMT
        if (rawName.endsWith('/') || mode === S_IFDIR) return zip.readEntry()
        if (mode !== 0 && mode !== S_IFREG) throw new ArchiveError(`the archive has an entry that is not a regular file: ${JSON.stringify(rawName)}`)
        zip.openReadStream(entry, (error, stream) => {
          if (error) return fail(error)
          const chunks: Buffer[] = []
          stream.on('data', (chunk: Buffer) => {
            try {
              budget.take(chunk.length)
              chunks.push(chunk)
            } catch (e) {
              stream.destroy()
              fail(e)
            }
          })
          stream.on('error', fail)
          stream.on('end', () => {
            if (failed) return
            files.set(name, Buffer.concat(chunks))
            zip.readEntry()
          })
        })
      } catch (error) {
        fail(error)
      }
    })
    zip.on('end', () => {
      if (!failed) resolve(files)
    })
    zip.readEntry()
  })
}
