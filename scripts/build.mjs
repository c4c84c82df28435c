#!/usr/bin/env node
// `npm run build`: the Prisma client and the TypeScript output, each rebuilt
// only when its sources changed, so a restart with nothing changed starts in
// a few seconds (`npm start` builds first).
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
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
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

/** Paths, sizes and modification times of every build input, hashed. */
function inputsFingerprint() {
  const hash = createHash('sha256')
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (full !== generated) visit(full)
      } else if (entry.name.endsWith('.ts')) {
        const { size, mtimeMs } = statSync(full)
        hash.update(`${path.relative(root, full)}\0${size}\0${mtimeMs}\n`)
      }
    }
  }
  for (const dir of ['src', 'test', 'bench']) if (existsSync(path.join(root, dir))) visit(path.join(root, dir))
  for (const file of ['tsconfig.json', 'prisma/schema.prisma', 'package-lock.json']) {
    const { size, mtimeMs } = statSync(path.join(root, file))
    hash.update(`${file}\0${size}\0${mtimeMs}\n`)
  }
  return hash.digest('hex')
}

const inputsStamp = path.join(root, 'dist/.build-inputs')
const inputs = inputsFingerprint()
if (existsSync(inputsStamp) && readFileSync(inputsStamp, 'utf8').trim() === inputs && existsSync(path.join(root, 'dist/src/server.js'))) {
  process.exit(0)
}

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
