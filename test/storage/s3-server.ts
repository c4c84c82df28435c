// A real S3-compatible server for the tests: s3rver (a dev dependency) run as
// its own process, bound to 127.0.0.1 on a port the system picks, storing
// into a fresh temporary directory. startS3Server(t) waits until it listens
// and stops it (and removes the directory) at teardown; newBucket() creates
// an empty bucket through the S3 API and returns settings shaped like
// config.s3, so the code under test talks to it exactly as to a production
// endpoint.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3'
import type { Config } from '../../src/config.js'

export type S3Settings = NonNullable<Config['s3']>

export interface Tap {
  teardown(fn: () => unknown): void
}

export interface S3Server {
  endpoint: string
  /** The server's one account (s3rver accepts these and rejects any other key). */
  accessKeyId: string
  secretAccessKey: string
  /** Creates an empty bucket with a unique name; settings as config.s3 holds them. */
  newBucket(): Promise<S3Settings>
  /** Settings for a bucket that does not exist on the server. */
  missingBucket(): S3Settings
}

const S3RVER_BIN = createRequire(import.meta.url).resolve('s3rver/bin/s3rver.js')
const START_TIMEOUT_MS = 20_000

export async function startS3Server(t: Tap): Promise<S3Server> {
  const directory = await mkdtemp(join(tmpdir(), 'roost-s3-'))
  const child = spawn(process.execPath, [S3RVER_BIN, '--directory', directory, '--address', '127.0.0.1', '--port', '0', '--no-vhost-buckets', '--silent'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  // Also stop it when this test process ends without running its teardowns.
  const killOnExit = () => child.kill('SIGKILL')
  process.on('exit', killOnExit)
  t.teardown(async () => {
    process.off('exit', killOnExit)
    await stop(child)
    await rm(directory, { recursive: true, force: true })
  })

  const port = await listeningPort(child)
  const endpoint = `http://127.0.0.1:${port}`
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
  const region = 'us-east-1'
  const admin = new S3Client({ endpoint, region, forcePathStyle: true, credentials })
  t.teardown(() => admin.destroy())

  return {
    endpoint,
    ...credentials,
    async newBucket() {
      const bucket = `roost-${randomUUID()}`
      await admin.send(new CreateBucketCommand({ Bucket: bucket }))
      return { endpoint, bucket, region, ...credentials }
    },
    missingBucket() {
      return { endpoint, bucket: `missing-${randomUUID()}`, region, ...credentials }
    },
  }
}

/** Resolves with the port from s3rver's "S3rver listening on <address>:<port>" line. */
function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => fail(new Error(`s3rver did not start within ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /S3rver listening on \S+:(\d+)/.exec(output)
      if (match) {
        done()
        resolve(Number(match[1]))
      }
    }
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(new Error(`s3rver exited (${code ?? signal}) before listening:\n${output}`))
    const fail = (error: Error) => {
      done()
      reject(error)
    }
    const done = () => {
      clearTimeout(timer)
      child.stdout?.off('data', onData)
      child.stderr?.off('data', onData)
      child.off('exit', onExit)
      // Keep draining its request log so a full pipe never blocks the server.
      child.stdout?.resume()
      child.stderr?.resume()
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.on('exit', onExit)
    child.on('error', fail)
  })
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}
