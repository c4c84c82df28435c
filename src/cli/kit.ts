// What every command module gets from program.ts: the streams and
// environment it runs with, the configuration, the services, the operator's
// context in an organization, and the two output shapes (a table for people,
// JSON with --json for scripts). Command modules register their commands on
// the program through these, so none reads the process's own state.
import { Argument, Option } from 'commander'
import type { Config } from '../config.js'
import type { NodeServices } from '../node-services.js'
import type { ActionContext } from '../services.js'
import { DataDirBusyError, lockDataDir } from '../db/data-dir-lock.js'
import { DatabaseConfigError, openDatabase, type Database } from '../db/client.js'
import { CliError, findOrganization, operatorContext, readConfig, withServices } from './session.js'

/** What a command reads and writes instead of the process's own environment and streams. */
export interface CliIo {
  env: Record<string, string | undefined>
  stdin: AsyncIterable<Buffer | string> | Iterable<Buffer | string>
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
}

export interface CliKit {
  io: CliIo
  /** One line on standard output. */
  out(line: string): void
  config(): Config
  withServices<T>(fn: (services: NodeServices) => Promise<T>): Promise<T>
  /** Runs fn as the operator (an owner) of the organization at that subdomain ('' or undefined: the root one). */
  inOrg<T>(subdomain: string | undefined, fn: (ctx: ActionContext) => Promise<T>): Promise<T>
  /** The database alone (no Redis, no caches): migrations and their status. */
  withDatabase<T>(fn: (database: Database) => Promise<T>): Promise<T>
  /** `rows` as JSON (one document) or as a table with these columns. */
  print<R>(json: boolean | undefined, rows: R[], columns: Column<R>[]): void
}

export interface Column<R> {
  header: string
  value(row: R): string
}

export function makeKit(io: CliIo): CliKit {
  const out = (line: string): void => void io.stdout.write(`${line}\n`)
  const config = (): Config => readConfig(io.env)
  const kit: CliKit = {
    io,
    out,
    config,
    withServices: (fn) => withServices(config(), fn),
    inOrg: (subdomain, fn) => kit.withServices(async (services) => fn(await operatorContext(services, await findOrganization(services, subdomain), io))),
    withDatabase: async (fn) => {
      const { databaseUrl, dataDir } = config()
      const lock = databaseUrl ? undefined : lockDataDir(dataDir, 'admin command')
      try {
        const database = await openDatabase({ databaseUrl, dataDir }).catch((error: unknown) => {
          throw error instanceof DatabaseConfigError ? new CliError(error.message) : error
        })
        try {
          return await fn(database)
        } finally {
          await database.close()
        }
      } finally {
        lock?.release()
      }
    },
    print: (json, rows, columns) => {
      if (json) return out(JSON.stringify(rows, null, 2))
      for (const line of table(columns.map((c) => c.header), rows.map((row) => columns.map((c) => c.value(row))))) out(line)
    },
  }
  return kit
}

/** Columns padded to their widest cell (the last one left ragged), two spaces apart. */
export function table(headers: string[], rows: string[][]): string[] {
  const all = [headers, ...rows]
  const widths = headers.map((_, i) => Math.max(...all.map((r) => [...(r[i] ?? '')].length)))
  return all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell + ' '.repeat((widths[i] as number) - [...cell].length))).join('  ').trimEnd())
}

/** `<org>`: the subdomain; '' names the root organization. */
export const orgArgument = (): Argument => new Argument('<org>', "the organization's subdomain ('' for the root organization)")

export const orgOption = (): Option => new Option('--org <subdomain>', "the organization's subdomain (default: the root organization at EXTERNAL_URL)")

export const jsonOption = (): Option => new Option('--json', 'print JSON instead of a table')

export { CliError, DataDirBusyError }
