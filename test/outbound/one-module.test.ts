// Outbound requests only through src/outbound/: no other source file may open
// an HTTP connection of its own (node:http, node:https, node:http2, node:tls,
// undici or the global fetch), nor let web-push send one
// (sendNotification). Type-only imports are fine.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { ROOT } from '../support/root.js'

const SRC = path.join(ROOT, 'src')
const OUTBOUND = path.join(SRC, 'outbound')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return full === OUTBOUND ? [] : sources(full)
    return entry.name.endsWith('.ts') ? [full] : []
  })
}

/** What in a file would open a connection without the outbound module. */
export function bypasses(text: string): string[] {
  const found: string[] = []
  const modules = /^\s*import\s+(?!type\s)[^'"]*?from\s+['"](node:(?:https?|http2|tls)|https?|http2|tls|undici|node-fetch|axios|got)['"]/gm
  for (const m of text.matchAll(modules)) found.push(`imports ${m[1]}`)
  for (const m of text.matchAll(/\b(?:import|require)\(\s*['"](node:(?:https?|http2|tls)|https?|http2|tls|undici|node-fetch|axios|got)['"]\s*\)/g)) found.push(`loads ${m[1]}`)
  const method = /^\s*(?:(?:public|private|protected|static|async|override)\s+)*fetch\s*\(/
  const code = text.split('\n').filter((line) => !/^\s*(?:\/\/|\/?\*)/.test(line))
  if (code.some((line) => (/(?<![.\w])fetch\s*\(/.test(line) && !method.test(line)) || /\bglobalThis\.fetch\b/.test(line))) found.push('calls the global fetch')
  if (/\bsendNotification\s*\(/.test(text)) found.push("calls web-push's sendNotification")
  return found
}

t.test('the check recognises the ways around the outbound module', async (t) => {
  t.same(bypasses(`import { request } from 'node:https'`), ['imports node:https'])
  t.same(bypasses(`import { connect, constants } from 'node:http2'`), ['imports node:http2'])
  t.same(bypasses(`import * as http from 'http'`), ['imports http'])
  t.same(bypasses(`import { request } from 'undici'`), ['imports undici'])
  t.same(bypasses(`const { request } = await import('node:http')`), ['loads node:http'])
  t.same(bypasses(`const res = await fetch(url)`), ['calls the global fetch'])
  t.same(bypasses(`await webpush.sendNotification(sub, body)`), ["calls web-push's sendNotification"])
  t.same(bypasses(`import type { IncomingMessage } from 'node:http'`), [])
  t.same(bypasses(`const body = await globalThis.fetch(url)`), ['calls the global fetch'])
  t.same(bypasses(`this.store.fetch(desc, id)`), [])
  t.same(bypasses(`// register, fetch (long-poll)`), [])
  t.same(bypasses(`  private async fetch(desc: QueueDescriptor): Promise<void> {`), [])
})

t.test('no source file outside src/outbound/ opens an outbound connection itself', async (t) => {
  const files = sources(SRC)
  t.ok(files.some((f) => f.endsWith(path.join('notifications', 'push-senders.ts'))), 'the senders are among the files checked')
  const offenders = files.flatMap((file) => bypasses(readFileSync(file, 'utf8')).map((what) => `${path.relative(ROOT, file)} ${what}`))
  t.same(offenders, [])
})
