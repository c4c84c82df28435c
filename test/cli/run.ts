// Runs an admin CLI command in this process (src/cli/program.ts runRoost)
// with the given environment (nothing inherited that selects a database,
// Redis or DATA_DIR), optionally feeding standard input, and collects what it
// prints. spawnCli runs the real binary (bin/roost.js) as a process instead.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { runRoost } from '../../src/cli/program.js'
import { ROOT } from '../support/root.js'

export const CLI_BINARY = path.join(ROOT, 'bin/roost.js')

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

const SELECTING = ['DATABASE_URL', 'REDIS_URL', 'REDIS_PREFIX', 'DATA_DIR', 'EXTERNAL_URL', 'S3_ENDPOINT', 'SMTP_URL', 'BOOTSTRAP_OWNER_EMAIL', 'BOOTSTRAP_OWNER_PASSWORD']

function environment(env: Record<string, string>): Record<string, string | undefined> {
  const base: Record<string, string | undefined> = { ...process.env }
  for (const name of SELECTING) delete base[name]
  return { ...base, ...env }
}

export async function runCli(args: string[], env: Record<string, string>, input?: string): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  const code = await runRoost(args, {
    env: environment(env),
    stdin: [input ?? ''],
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  })
  return { code, stdout, stderr }
}

export function spawnCli(args: string[], env: Record<string, string>, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BINARY, ...args], { cwd: ROOT, env: environment(env), stdio: ['pipe', 'pipe', 'pipe'] })
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
