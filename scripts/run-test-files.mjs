// Runs compiled tap test files, each as a plain `node` process, a few at a
// time, and reports one line per file. scripts/test.mjs uses it instead of
// tap's own runner: that runner starts every file with tap's TypeScript
// loader and its process-info loader (about 2.5 s of CPU a file, measured
// with /usr/bin/time on a file of a few assertions), which compiled
// JavaScript needs neither of. A tap test file runs on its own and prints
// TAP ending in a summary line such as "# { total: 59, pass: 58, fail: 1 }";
// that line and the exit code are what this reads.
//
// With `batch`, files run instead in `jobs` long-lived worker processes
// (scripts/test-batch.mjs), each importing one file after another, handed
// out as workers free up: the module graph and the PGlite test database are
// then loaded once per worker instead of once per file. Markers the worker
// prints around each file split its output into one result per file; a
// worker that dies or overruns a file's time is replaced, and the file it was
// running fails.
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'

/** The counts of a file's top-level summary line, or undefined when it printed none (it crashed or ran no test). */
export function summaryOf(output) {
  const lines = output.split('\n')
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^# \{ (total: \d+.*) \}\s*$/.exec(lines[i])
    if (m) return Object.fromEntries(m[1].split(', ').map((kv) => kv.split(': ')).map(([k, v]) => [k, Number(v)]))
  }
  return undefined
}

/** The lines of a file's output worth showing when it failed: each failing assertion with its diagnostics. */
export function failureExcerpt(output, maxLines = 120) {
  const lines = output.split('\n')
  const shown = []
  for (let i = 0; i < lines.length && shown.length < maxLines; i++) {
    if (!/^\s*not ok /.test(lines[i])) continue
    const indent = /^\s*/.exec(lines[i])[0].length
    shown.push(lines[i])
    // The YAML block of diagnostics that follows, indented deeper than the "not ok" line.
    for (let j = i + 1; j < lines.length && shown.length < maxLines; j++) {
      const depth = /^\s*/.exec(lines[j])[0].length
      if (lines[j].trim() !== '' && depth <= indent) break
      shown.push(lines[j])
      i = j
    }
  }
  return shown.length > 0 ? shown.join('\n') : lines.slice(-40).join('\n')
}

/**
 * Runs `files` (paths under `root`, e.g. dist/test/http/x.test.js), `jobs` at
 * a time, longest-expected first (`weight`), each with `env` and tap's
 * per-test timeout `timeoutSeconds`; a file still running after that long
 * plus a minute is killed with its process group. Each file's whole output
 * goes to .tap/test-results/<file>.tap. `full`: print each file's output as
 * it ends; `label` (the phase) starts each line; `onFile(file, seconds)` is told each file's duration. Resolves with the summed counts, the failed files and each one's failure excerpt.
 */
export async function runTestFiles(files, { root, env, jobs = 2, timeoutSeconds = 120, raiseOpenFiles = false, full = false, weight = () => 0, onFile = () => {}, label = '', batch = false }) {
  const queue = [...files].sort((a, b) => weight(b) - weight(a))
  const totals = { pass: 0, fail: 0, files: 0 }
  const failed = []
  /** Each failed file's failing assertions, printed again at the end of the run. */
  const excerpts = {}
  const resultsDir = path.join(root, '.tap/test-results')
  const save = (file, output) => {
    const out = path.join(resultsDir, `${path.relative('dist/test', file)}.tap`)
    mkdirSync(path.dirname(out), { recursive: true })
    writeFileSync(out, output)
  }
  const runOne = (file) =>
    new Promise((resolve) => {
      const started = Date.now()
      const node = [process.execPath, '--enable-source-maps', file]
      const [command, args] = raiseOpenFiles
        ? ['sh', ['-c', 'ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"', ...node]]
        : [node[0], node.slice(1)]
      const child = spawn(command, args, { cwd: root, env: { ...env, TAP_TIMEOUT: String(timeoutSeconds) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
      const chunks = []
      child.stdout.on('data', (c) => chunks.push(c))
      child.stderr.on('data', (c) => chunks.push(c))
      const killer = setTimeout(() => {
        chunks.push(Buffer.from(`\n# killed: still running after ${timeoutSeconds + 60} s\n`))
        try {
          process.kill(-child.pid, 'SIGKILL')
        } catch {}
      }, (timeoutSeconds + 60) * 1000)
      child.on('close', (code, signal) => {
        clearTimeout(killer)
        // Whatever the file started and left behind goes with it.
        try {
          process.kill(-child.pid, 'SIGKILL')
        } catch {}
        const output = Buffer.concat(chunks).toString()
        save(file, output)
        resolve({ file, code: code ?? (signal ? 1 : 0), summary: summaryOf(output), output, seconds: (Date.now() - started) / 1000 })
      })
    })
  const report = ({ file, code, summary, output, seconds }) => {
    onFile(file, seconds)
    const ok = code === 0 && (summary?.fail ?? 0) === 0
    const asserts = summary?.total ?? 0
    totals.files += 1
    totals.pass += summary?.pass ?? 0
    totals.fail += summary?.fail ?? (ok ? 0 : 1)
    if (!ok && summary?.fail === 0) totals.fail += 1 // exited non-zero with every assertion passing
    const name = path.relative('dist', file).replace(/\.js$/, '.ts')
    if (full) console.log(output)
    console.log(`${label ? `[${label}] ` : ''}${ok ? 'ok  ' : 'FAIL'} ${seconds.toFixed(1).padStart(6)} s ${String(asserts).padStart(6)} asserts  ${name}`)
    if (!ok) {
      const excerpt = failureExcerpt(output)
      failed.push(name)
      excerpts[name] = excerpt
      if (!full) console.log(excerpt.replace(/^/gm, '    | '))
    }
  }
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) report(await runOne(file))
  }
  const batchWorker = async () => {
    while (queue.length > 0) await runBatch(queue, { root, env, timeoutSeconds, save, report })
  }
  await Promise.all(Array.from({ length: Math.max(1, jobs) }, batch ? batchWorker : worker))
  return { ...totals, failed, excerpts }
}

const BATCH_MARK = '# roost-batch '

/**
 * One worker process of scripts/test-batch.mjs, fed files from `queue` until
 * it is empty or the worker dies; reports each file as runOne's result would.
 */
function runBatch(queue, { root, env, timeoutSeconds, save, report }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--enable-source-maps', path.join(root, 'scripts/test-batch.mjs')], {
      cwd: root,
      // The root test lives as long as the worker: no timeout of tap's own; each file's is kept here.
      env: { ...env, TAP_TIMEOUT: '0' },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    })
    let current // { file, started, killer }
    let text = ''
    let pending = ''
    const next = () => {
      const file = queue.shift()
      if (file === undefined) {
        child.stdin.end()
        return
      }
      const killer = setTimeout(() => {
        text += `\n# killed: still running after ${timeoutSeconds + 60} s\n`
        try {
          process.kill(-child.pid, 'SIGKILL')
        } catch {}
      }, (timeoutSeconds + 60) * 1000)
      current = { file, started: Date.now(), killer }
      child.stdin.write(`${file}\n`)
    }
    const finish = (counts, code) => {
      clearTimeout(current.killer)
      save(current.file, text)
      report({ file: current.file, code, summary: counts, output: text, seconds: (Date.now() - current.started) / 1000 })
      current = undefined
      text = ''
    }
    const onLine = (line) => {
      if (line.startsWith(BATCH_MARK)) {
        const record = JSON.parse(line.slice(BATCH_MARK.length))
        if (record.end !== undefined && current?.file === record.end) {
          finish(record.counts, record.counts.fail > 0 ? 1 : 0)
          next()
        }
        return
      }
      if (current) text += `${line}\n`
    }
    const onData = (chunk) => {
      pending += chunk.toString()
      const lines = pending.split('\n')
      pending = lines.pop()
      for (const line of lines) onLine(line)
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (chunk) => {
      if (current) text += chunk.toString()
    })
    child.stdin.on('error', () => {}) // a worker that died before reading its next file
    child.on('close', (code, signal) => {
      if (pending) onLine(pending)
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {}
      // The file that was running when the worker ended fails with what it printed.
      if (current) finish(undefined, code || (signal ? 1 : 0) || 1)
      resolve()
    })
    next()
  })
}
