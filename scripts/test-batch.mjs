// Runs several compiled tap test files in this one process, one after the
// other: each file's top-level tests are the root test's subtests, and the
// next file is imported only when the previous file's tests have ended. The
// files then share one module graph and one test database (test/support's
// testDatabase), so the fixed cost of a file (loading the modules, about 2 s
// of CPU, and starting PGlite from its image, about 4 s) is paid once per
// batch instead of once per file.
//
//   node scripts/test-batch.mjs < list-of-files     (one path a line)
//
// It reads the next file's path from stdin only when the previous file has
// ended, so scripts/run-test-files.mjs hands out files as workers free up,
// longest first; end of input ends the batch.
// Before and after each file it writes a marker line to stdout (BATCH_MARK,
// then JSON: the file, and at its end the root's assertion counts that the
// file added and its duration); scripts/run-test-files.mjs splits the output
// at these markers into one result per file.
import { pathToFileURL } from 'node:url'
import path from 'node:path'
import { createInterface } from 'node:readline'
import t from 'tap'

export const BATCH_MARK = '# roost-batch '

/** The root's counts, as numbers (tap keeps total, pass, fail, skip, todo, complete). */
const counts = () => ({ total: t.counts.total, pass: t.counts.pass, fail: t.counts.fail, skip: t.counts.skip, todo: t.counts.todo })

const mark = (record) => process.stdout.write(`\n${BATCH_MARK}${JSON.stringify(record)}\n`)

// Each file's top-level t.test() promises, collected while the file is
// imported, tell when its tests have ended.
const rootTest = t.test.bind(t)
let collecting
t.test = (...args) => {
  const promise = rootTest(...args)
  collecting?.push(promise)
  return promise
}

// A file's t.teardown() on the root (test/support's shared database) would
// make the root end as soon as it is idle, which it is between two files:
// root teardowns are kept here and run after the last file instead.
const teardowns = []
t.teardown = (fn) => {
  teardowns.push(fn)
}

// A file's root timeout (t.setTimeout) would time the whole worker out:
// scripts/run-test-files.mjs times each file instead.
t.setTimeout = () => {}

for await (const line of createInterface({ input: process.stdin })) {
  const file = line.trim()
  if (file === '') continue
  const before = counts()
  const started = Date.now()
  collecting = []
  mark({ start: file })
  try {
    await import(pathToFileURL(path.resolve(file)).href)
    // Tests a file queues from inside its own tests are waited for too.
    for (let i = 0; i < collecting.length; i++) await collecting[i]
  } catch (error) {
    t.fail(`${file} failed to load or run`, { error })
  }
  const after = counts()
  const delta = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]))
  mark({ end: file, counts: delta, seconds: (Date.now() - started) / 1000 })
}
collecting = undefined
for (const fn of teardowns) await fn()
t.end()
