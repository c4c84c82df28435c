// Embedded mode keeps the database in PGlite files under DATA_DIR, which only
// one process may open at a time. Whoever opens them (the server, the admin
// CLI) first writes DATA_DIR/roost.pid with its process ID and what it is,
// and removes it when it stops; a file naming a live process other than this
// one means "busy". A file left by a process that died is taken over.
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'

export const PID_FILE = 'roost.pid'

export class DataDirBusyError extends Error {
  override name = 'DataDirBusyError'
}

export interface DataDirLock {
  readonly file: string
  /** Removes the file if it is still ours. Synchronous, so it also runs on process exit. */
  release(): void
}

function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function holderOf(file: string): { pid: number; what: string } | undefined {
  try {
    const [pid, what] = readFileSync(file, 'utf8').split('\n')
    return { pid: Number(pid), what: what || 'process' }
  } catch {
    return undefined
  }
}

/** Takes DATA_DIR for this process, or throws DataDirBusyError naming the process that holds it. */
export function lockDataDir(dataDir: string, what: 'server' | 'admin command'): DataDirLock {
  mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, PID_FILE)
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n${what}\n`, { flag: 'wx' })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error
      const holder = holderOf(file)
      if (holder && isAlive(holder.pid)) {
        throw new DataDirBusyError(
          `the embedded database in ${path.resolve(dataDir)} is in use by a Roost ${holder.what} (process ${holder.pid}); ` +
            'stop it first, or set DATABASE_URL to use PostgreSQL, where any number of processes may connect',
        )
      }
      // Left behind by a process that is gone.
      try {
        unlinkSync(file)
      } catch {
        // Another process removed it first; the retry decides.
      }
    }
  }
  let released = false
  return {
    file,
    release() {
      if (released) return
      released = true
      if (holderOf(file)?.pid === process.pid) {
        try {
          unlinkSync(file)
        } catch {
          // Already gone.
        }
      }
    },
  }
}
