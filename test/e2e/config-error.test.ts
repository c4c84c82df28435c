// A bad configuration stops startup with a message naming the variable.
import t from 'tap'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const server = path.join(root, 'dist/src/server.js')

function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [server], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('close', (code) => resolve({ code, stderr }))
  })
}

for (const [name, value, expected] of [
  ['PORT', 'ninety', /configuration error: PORT must be an integer/],
  ['REDIS_URL', 'http://localhost', /configuration error: REDIS_URL must use one of redis:, rediss:/],
  ['HEARTBEAT_INTERVAL_SECONDS', '0', /configuration error: HEARTBEAT_INTERVAL_SECONDS must be an integer/],
  ['LISTEN_BACKLOG', '-1', /configuration error: LISTEN_BACKLOG must be an integer/],
] as const) {
  t.test(`${name}=${value} stops the server before it starts`, async (t) => {
    const { code, stderr } = await start({ [name]: value })
    t.equal(code, 1)
    t.match(stderr, expected)
  })
}
