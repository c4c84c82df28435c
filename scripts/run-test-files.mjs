// Runs compiled tap test files, each as a plain `node` process, a few at a
// time, and reports one line per file. scripts/test.mjs uses it instead of
// tap's own runner: that runner starts every file with tap's TypeScript
// loader and its process-info loader (about 2.5 s of CPU a file, measured
// with /usr/bin/time on a file of a few assertions), which compiled
// JavaScript needs neither of. A tap test file runs on its own and prints
// TAP ending in a summary line such as "# { total: 59, pass: 58, fail: 1 }";
// that line and the exit code are what this reads.
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
 * it ends; `label` (the phase) starts each line; `onFile(file, seconds)` is told each file's duration. Resolves with the summed counts and the failed files.
 */
export async function runTestFiles(files, { root, env, jobs = 2, timeoutSeconds = 120, raiseOpenFiles = false, full = false, weight = () => 0, onFile = () => {}, label = '' }) {
  const queue = [...files].sort((a, b) => weight(b) - weight(a))
  const totals = { pass: 0, fail: 0, files: 0 }
  const failed = []
  const resultsDir = path.join(root, '.tap/test-results')
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
        const out = path.join(resultsDir, `${path.relative('dist/test', file)}.tap`)
        mkdirSync(path.dirname(out), { recursive: true })
        writeFileSync(out, output)
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
      failed.push(name)
      if (!full) console.log(failureExcerpt(output).replace(/^/gm, '    | '))
    }
  }
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) report(await runOne(file))
  }
  await Promise.all(Array.from({ length: Math.max(1, jobs) }, worker))
  return { ...totals, failed }
}
