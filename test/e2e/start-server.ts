// Starts the compiled server as a real process on a fresh embedded DATA_DIR
// and a free port, and reads the demo owner's credentials it prints once.
// `npm start` is `npm run build && node dist/src/server.js`; the test runner
// has already built, so the e2e tests spawn the second half directly.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { ROOT } from '../support/root.js'
import { SERVER_NODE_OPTIONS } from '../../src/node-options.js'

export const SERVER_ENTRY = path.join(ROOT, 'dist/src/server.js')

export interface RunningServer {
  url: string
  email: string
  password: string
  apiKey: string
  realmName: string
  /** The server's DATA_DIR (removed by stop()). */
  dataDir: string
  child: ChildProcess
  /** Everything the process printed so far (stdout and stderr). */
  output(): string
  /** SIGTERM, then the exit code (null if killed by a signal). */
  stop(): Promise<number | null>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.unref()
    probe.on('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      const port = typeof address === 'object' && address ? address.port : 0
      probe.close(() => resolve(port))
    })
  })
}

const PATTERNS = {
  realm: /^roost: created the organization '(.+)' at (\S+)$/m,
  email: /^roost: owner email:\s+(\S+)$/m,
  password: /^roost: owner password:\s+(\S+)$/m,
  apiKey: /^roost: owner API key:\s+(\S+)$/m,
  serving: /^roost: serving (\S+)\/api\/v1 on (\S+)$/m,
}

export interface StartOptions {
  env?: Record<string, string>
  startTimeoutMs?: number
}

export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-e2e-'))
  const port = await freePort()
  const env: Record<string, string | undefined> = { ...process.env, ...options.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir }
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'EXTERNAL_URL', 'BOOTSTRAP_REALM_NAME', 'BOOTSTRAP_OWNER_EMAIL', 'BOOTSTRAP_OWNER_PASSWORD']) {
    if (!options.env?.[name]) delete env[name]
  }
  const child = spawn(process.execPath, [...SERVER_NODE_OPTIONS, SERVER_ENTRY], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const cleanup = () => rmSync(dataDir, { recursive: true, force: true })

  const timeoutMs = options.startTimeoutMs ?? 90_000
  await new Promise<void>((resolve, reject) => {
    let settled = false
    const timer = setTimeout(() => fail(new Error(`server did not start within ${timeoutMs} ms; output:\n${out}`)), timeoutMs)
    const fail = (error: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.kill('SIGKILL')
      cleanup()
      reject(error)
    }
    child.stdout?.on('data', () => {
      if (settled || !PATTERNS.serving.test(out)) return
      settled = true
      clearTimeout(timer)
      resolve()
    })
    void exited.then((code) => fail(new Error(`server exited with ${code} before serving; output:\n${out}`)))
  })

  const field = (re: RegExp, group = 1) => {
    const m = re.exec(out)
    if (!m) throw new Error(`the server did not print ${re}; output:\n${out}`)
    return m[group]
  }
  return {
    url: `http://127.0.0.1:${port}`,
    realmName: field(PATTERNS.realm),
    dataDir,
    email: field(PATTERNS.email),
    password: field(PATTERNS.password),
    apiKey: field(PATTERNS.apiKey),
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
      const code = await exited
      clearTimeout(timer)
      cleanup()
      return code
    },
  }
}

export function basicAuth(email: string, apiKey: string): string {
  return `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}`
}
