#!/usr/bin/env node
// `npm run build`: the Prisma client, the TypeScript output and the browser
// app, each rebuilt only when its sources changed, so a restart with nothing
// changed starts in a few seconds (`npm start` builds first).
//
// - Nothing at all runs when no input changed since the last successful
//   build: the paths, sizes and modification times of the inputs (sources,
//   tsconfig.json, the schema, package-lock.json) are recorded in
//   dist/.build-inputs, and compared first (milliseconds).
// - The Prisma client (src/db/generated) is regenerated when the schema or
//   the installed Prisma version differs from what the last generation
//   recorded in src/db/generated/.source-sha256.
// - tsc runs in incremental mode with its state in dist/.tsbuildinfo: files
//   whose sources (and dependencies) are unchanged are not emitted again.
//   Deleting dist/ makes the next build a full one.
// - The browser app (web/) is built by Vite into dist/web when a file under
//   web/ (or package-lock.json) changed since the last build recorded in
//   dist/web/.build-inputs; every built asset then gets a .gz and a .br copy
//   next to it, which src/http/web-app.ts serves to browsers that accept them.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const bin = (name) => path.join(root, 'node_modules/.bin', name)
const generated = path.join(root, 'src/db/generated')
const stamp = path.join(generated, '.source-sha256')

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

/** Paths, sizes and modification times of the files under `dirs` (those `keep` accepts) and of `files`, hashed. */
function fingerprint(dirs, files, keep) {
  const hash = createHash('sha256')
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (full !== generated && entry.name !== 'node_modules') visit(full)
      } else if (keep(entry.name)) {
        const { size, mtimeMs } = statSync(full)
        hash.update(`${path.relative(root, full)}\0${size}\0${mtimeMs}\n`)
      }
    }
  }
  for (const dir of dirs) if (existsSync(path.join(root, dir))) visit(path.join(root, dir))
  for (const file of files) {
    const { size, mtimeMs } = statSync(path.join(root, file))
    hash.update(`${file}\0${size}\0${mtimeMs}\n`)
  }
  return hash.digest('hex')
}

// web/src holds the browser model the unit tests compile with tsc.
const inputsStamp = path.join(root, 'dist/.build-inputs')
const inputs = fingerprint(['src', 'test', 'bench', 'web/src'], ['tsconfig.json', 'prisma/schema.prisma', 'package-lock.json'], (name) => name.endsWith('.ts'))
const webDir = path.join(root, 'dist/web')
const webStamp = path.join(webDir, '.build-inputs')
const webInputs = fingerprint(['web'], ['package-lock.json'], () => true)
const upToDate = (stampFile, value) => existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === value
const serverUpToDate = upToDate(inputsStamp, inputs) && existsSync(path.join(root, 'dist/src/server.js'))
const webUpToDate = upToDate(webStamp, webInputs) && existsSync(path.join(webDir, 'index.html'))
if (serverUpToDate && webUpToDate) process.exit(0)

if (!webUpToDate) {
  // Stale hashed files of an earlier build would be served forever; the app's files are rewritten whole.
  rmSync(path.join(webDir, 'assets'), { recursive: true, force: true })
  rmSync(path.join(webDir, 'index.html'), { force: true })
  run(bin('vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'])
  const assets = path.join(webDir, 'assets')
  for (const name of readdirSync(assets)) {
    if (!/\.(js|css|svg|json|txt|html)$/.test(name)) continue
    const body = readFileSync(path.join(assets, name))
    writeFileSync(path.join(assets, `${name}.gz`), gzipSync(body, { level: 9 }))
    writeFileSync(path.join(assets, `${name}.br`), brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }))
  }
  mkdirSync(webDir, { recursive: true })
  writeFileSync(webStamp, `${webInputs}\n`)
}
if (serverUpToDate) process.exit(0)

function prismaSourceHash() {
  const hash = createHash('sha256')
  hash.update(readFileSync(path.join(root, 'prisma/schema.prisma')))
  hash.update(readFileSync(path.join(root, 'node_modules/prisma/package.json')))
  return hash.digest('hex')
}

const wanted = prismaSourceHash()
const recorded = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : ''
if (recorded !== wanted || !existsSync(path.join(generated, 'client.ts'))) {
  run(bin('prisma'), ['generate'])
  writeFileSync(stamp, `${wanted}\n`)
}

run(bin('tsc'), ['-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', path.join(root, 'dist/.tsbuildinfo')])
writeFileSync(inputsStamp, `${inputs}\n`)
