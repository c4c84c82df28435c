// Runs the compiled admin CLI as a real process: `node dist/src/cli/main.js …`
// with the given environment (nothing inherited that selects a database,
// Redis or DATA_DIR), optionally feeding standard input.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { ROOT } from '../support/root.js'

export const CLI_ENTRY = path.join(ROOT, 'dist/src/cli/main.js')

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

const SELECTING = ['DATABASE_URL', 'REDIS_URL', 'REDIS_PREFIX', 'DATA_DIR', 'EXTERNAL_URL', 'S3_ENDPOINT', 'SMTP_URL', 'BOOTSTRAP_OWNER_EMAIL', 'BOOTSTRAP_OWNER_PASSWORD']

export function runCli(args: string[], env: Record<string, string>, input?: string): Promise<CliResult> {
  const base: Record<string, string | undefined> = { ...process.env }
  for (const name of SELECTING) delete base[name]
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], { cwd: ROOT, env: { ...base, ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(input ?? '')
  })
}

/** The value printed after `label:` on a line of its own. */
export function printed(output: string, label: string): string {
  const line = output.split('\n').find((l) => l.startsWith(`${label}:`))
  if (line === undefined) throw new Error(`no '${label}:' line in:\n${output}`)
  return line.slice(label.length + 1).trim()
}
