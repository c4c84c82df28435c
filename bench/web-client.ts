// The web app's speed in Debian's Chromium against `node dist/src/server.js`
// (embedded, RATE_LIMITING=off), with a raw long-poll client as the baseline
// measured in the same run. No figure is asserted; the run is written to
// bench/results/<date>-web-client.md.
//
//   node dist/bench/web-client.js [--messages 10000] [--live 200] [--variant NAME] [--profile] [--trace]
//
// The run is written to bench/results/<date>-web-client[-NAME].md, with the
// load average when it started and when the scroll started (the machine is
// shared: a busy one makes long tasks of any frame).
//
// Figures:
//   - JavaScript the first load fetches, gzip-compressed (target ≤ 200 KB)
//   - submitting the login form → the first message list painted (the app then
//     runs on its session cookie, as a person's browser does)
//   - a POST /messages by another user → the message in the open view, p50/p99,
//     against the same message's event at a raw long-poll client
//   - scrolling a channel of N messages from newest to oldest: long tasks > 50 ms,
//     the time between animation frames, and where each long animation frame's
//     time went (--profile adds a CPU profile of the page, --trace a Chromium trace)
//   - the page's JS heap with the N messages loaded
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem, release } from 'node:os'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { chromium, type BrowserContext } from 'playwright-core'
import { freePort, ROOT } from './support.js'

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ')
const loadAtStart = load()
const variantAt = process.argv.indexOf('--variant')
const VARIANT = variantAt >= 0 ? `-${process.argv[variantAt + 1]}` : ''
const MESSAGES = arg('messages', 10_000)
const LIVE = arg('live', 200)
const OWNER = { email: 'owner@bench.example', password: 'bench-owner-password' }
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-web-'))
const port = await freePort()
const origin = `http://127.0.0.1:${port}`
const server = spawn(process.execPath, [path.join(ROOT, 'dist/src/server.js')], {
  cwd: ROOT,
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, EXTERNAL_URL: origin, RATE_LIMITING: 'off', LOG_LEVEL: 'warn', BOOTSTRAP_REALM_NAME: 'Bench', BOOTSTRAP_OWNER_EMAIL: OWNER.email, BOOTSTRAP_OWNER_PASSWORD: OWNER.password, DATABASE_URL: '', REDIS_URL: '' },
  stdio: ['ignore', 'pipe', 'inherit'],
})
const stop = () => {
  server.kill('SIGTERM')
  rmSync(dataDir, { recursive: true, force: true })
}
await new Promise<void>((resolve, reject) => {
  let out = ''
  server.stdout?.on('data', (c: Buffer) => {
    out += c.toString()
    if (/roost: serving/.test(out)) resolve()
  })
  server.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)))
})

type Json = Record<string, unknown>
async function api(auth: string, method: string, route: string, params: Json = {}): Promise<Json> {
  const body = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))
  const res = await fetch(`${origin}/api/v1${route}${method === 'GET' ? `?${body}` : ''}`, { method, headers: { authorization: auth }, body: method === 'GET' ? undefined : body })
  const json = (await res.json()) as Json
  if (json.result !== 'success') throw new Error(`${method} ${route}: ${JSON.stringify(json)}`)
  return json
}
const basic = (email: string, key: string) => `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`
const keyOf = async (email: string, password: string) => {
  const res = await fetch(`${origin}/api/v1/fetch_api_key`, { method: 'POST', body: new URLSearchParams({ username: email, password }) })
  return String(((await res.json()) as Json).api_key)
}

const ownerAuth = basic(OWNER.email, await keyOf(OWNER.email, OWNER.password))
const sender = { email: 'sender@bench.example', password: 'bench-sender-password' }
await api(ownerAuth, 'POST', '/users', { email: sender.email, password: sender.password, full_name: 'Sender' })
const senderAuth = basic(sender.email, await keyOf(sender.email, sender.password))
await api(ownerAuth, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'bench' }] })
await api(senderAuth, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'bench' }] })
const streamId = Number((await api(ownerAuth, 'GET', '/get_stream_id', { stream: 'bench' })).stream_id)

console.log(`seeding ${MESSAGES} messages…`)
let next = 0
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (next < MESSAGES) {
      const n = next++
      await api(senderAuth, 'POST', '/messages', { type: 'stream', to: String(streamId), topic: `t${n % 20}`, content: `seed ${n} ${'lorem ipsum '.repeat(n % 7)}` })
    }
  }),
)
await api(ownerAuth, 'POST', '/mark_all_as_read')

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS })
const context: BrowserContext = await browser.newContext({ viewport: { width: 1280, height: 900 } })
const page = await context.newPage()
let jsGzip = 0
page.on('response', (res) => {
  if (/\/assets\/.*\.js$/.test(res.url())) void res.body().then((b) => (jsGzip += gzipSync(b, { level: 9 }).length)).catch(() => undefined)
})
// Logging in as a person does: the login page's form, then the app on its session cookie (every /json request after it).
await page.goto(`${origin}/login?next=${encodeURIComponent(`/#channel/${streamId}`)}`)
await page.fill('#username', OWNER.email)
await page.fill('#password', OWNER.password)
const openStarted = Date.now()
await page.click('#submit')
await page.waitForSelector('.message', { timeout: 60_000 })
const firstPaintMs = (await page.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => r(Date.now()))))) - openStarted
// The app holds a long-poll open: the first load's scripts are in once the list is painted.
const firstLoadJs = jsGzip

// Live: each message's arrival in the view (MutationObserver) and at a raw long-poll client.
await page.evaluate(() => {
  const seen: Record<string, number> = {}
  ;(window as unknown as { __seen: Record<string, number> }).__seen = seen
  // Disconnected before the scroll, whose rows it would otherwise search at every change.
  ;(window as unknown as { __liveObserver: MutationObserver }).__liveObserver = new MutationObserver(() => {
    for (const el of document.querySelectorAll('.message .content')) {
      const m = /live-(\d+)/.exec(el.textContent ?? '')
      if (m && seen[m[1]!] === undefined) seen[m[1]!] = Date.now()
    }
  })
  ;(window as unknown as { __liveObserver: MutationObserver }).__liveObserver.observe(document.body, { childList: true, subtree: true, characterData: true })
})
const queue = await api(ownerAuth, 'POST', '/register', { event_types: ['message'] })
let lastEventId = Number(queue.last_event_id)
const rawSeen = new Map<number, number>()
let polling = true
const poller = (async () => {
  while (polling) {
    const res = await api(ownerAuth, 'GET', '/events', { queue_id: String(queue.queue_id), last_event_id: String(lastEventId) }).catch(() => ({ events: [] }))
    const now = Date.now()
    for (const e of (res.events as { id: number; type: string; message?: { content: string } }[]) ?? []) {
      lastEventId = Math.max(lastEventId, e.id)
      const m = /live-(\d+)/.exec(e.message?.content ?? '')
      if (m) rawSeen.set(Number(m[1]), now)
    }
  }
})()
const appLatency: number[] = []
const rawLatency: number[] = []
for (let i = 0; i < LIVE; i++) {
  const sent = Date.now()
  await api(senderAuth, 'POST', '/messages', { type: 'stream', to: String(streamId), topic: 't0', content: `live-${i}` })
  const shown = await page.waitForFunction((n) => (window as unknown as { __seen: Record<string, number> }).__seen[String(n)], i, { timeout: 10_000 }).then((h) => h.jsonValue() as Promise<number>)
  const deadline = Date.now() + 10_000
  while (!rawSeen.has(i) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1))
  appLatency.push(shown - sent)
  rawLatency.push((rawSeen.get(i) ?? NaN) - sent)
}
polling = false
await api(senderAuth, 'POST', '/messages', { type: 'stream', to: String(streamId), topic: 't0', content: 'end' })
await poller

// Scrolling the channel from newest to oldest (the app loads older pages as it goes).
await page.evaluate(() => {
  ;(window as unknown as { __liveObserver: MutationObserver }).__liveObserver.disconnect()
  const w = window as unknown as { __long: number[] }
  w.__long = []
  new PerformanceObserver((list) => list.getEntries().forEach((e) => w.__long.push(e.duration))).observe({ type: 'longtask', buffered: false })
  // Long animation frames: where each one's time went (script, the style and layout script forced, rendering).
  const loaf = ((window as unknown as { __loaf: string[] }).__loaf = [] as string[])
  type Frame = PerformanceEntry & { renderStart: number; styleAndLayoutStart: number; scripts: { duration: number; forcedStyleAndLayoutDuration: number; invoker: string }[] }
  new PerformanceObserver((list) =>
    (list.getEntries() as Frame[]).forEach((f) => {
      const script = f.scripts.reduce((sum, s) => sum + s.duration, 0)
      const forced = f.scripts.reduce((sum, s) => sum + s.forcedStyleAndLayoutDuration, 0)
      const end = f.startTime + f.duration
      const styleLayoutPaint = f.styleAndLayoutStart ? end - f.styleAndLayoutStart : 0
      loaf.push(`${f.duration.toFixed(0)} ms: script ${script.toFixed(0)} (of which forced style and layout ${forced.toFixed(0)}; ${f.scripts.map((s) => `${s.invoker} ${s.duration.toFixed(0)}`).join(', ')}), then style, layout and paint ${styleLayoutPaint.toFixed(0)}`)
    }),
  ).observe({ type: 'long-animation-frame', buffered: false })
})
const loadAtScroll = load()
// --trace: a Chromium trace of the scroll, and what the long tasks' time went to (the tracing adds its own cost).
const TRACE = process.argv.includes('--trace')
if (TRACE) await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute'] })
// --profile: a sampling CPU profile of the page during the scroll, printed as the functions with the most self time.
const PROFILE = process.argv.includes('--profile')
const profiler = PROFILE ? await context.newCDPSession(page) : undefined
if (profiler) {
  await profiler.send('Profiler.enable')
  await profiler.send('Profiler.setSamplingInterval', { interval: 200 })
  await profiler.send('Profiler.start')
}
const scrollStarted = Date.now()
const { frames: scrolled, gaps: frameGaps } = await page.evaluate(async (limitMs) => {
  const el = document.querySelector<HTMLElement>('.messages')!
  const started = performance.now()
  let frames = 0
  // The time between one animation frame and the next: what a reader sees, more finely than long tasks.
  const gaps: number[] = []
  let last = performance.now()
  while (performance.now() - started < limitMs) {
    el.scrollTop = Math.max(0, el.scrollTop - 600)
    el.dispatchEvent(new Event('scroll'))
    const now = await new Promise<number>((r) => requestAnimationFrame(r))
    gaps.push(now - last)
    last = now
    frames++
    if (el.scrollTop === 0 && document.querySelector('.edge') && !document.querySelector('.edge[role=status]')) {
      await new Promise((r) => setTimeout(r, 300))
      if (el.scrollTop === 0) break
      last = performance.now()
    }
  }
  return { frames, gaps }
}, 240_000)
const scrollMs = Date.now() - scrollStarted
if (profiler) {
  type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }
  const { profile } = (await profiler.send('Profiler.stop')) as { profile: { nodes: Node[]; samples: number[]; timeDeltas: number[] } }
  const self = new Map<string, number>()
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  profile.samples.forEach((id, i) => {
    const f = byId.get(id)!.callFrame
    const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\//, '')}:${f.lineNumber + 1}`
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  const top = [...self.entries()].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, 40)
  console.log(`CPU profile of the scroll, self time (of ${(total / 1000).toFixed(0)} ms sampled):\n${top.map(([k, v]) => `${(v / 1000).toFixed(1)} ms ${k}`).join('\n')}`)
}
const longTasks = await page.evaluate(() => (window as unknown as { __long: number[] }).__long)
const longFrames = await page.evaluate(() => (window as unknown as { __loaf: string[] }).__loaf)
const traced: string[] = []
if (TRACE) {
  type Ev = { name: string; ph: string; ts: number; dur?: number; tid: number; pid: number }
  const events = (JSON.parse((await browser.stopTracing()).toString()) as { traceEvents: Ev[] }).traceEvents
  const tasks = events.filter((e) => e.name === 'RunTask' && e.ph === 'X' && (e.dur ?? 0) > 50_000)
  // The page's main thread: the one whose tasks hold the most layout.
  const layoutTid = new Map<string, number>()
  for (const e of events) if (e.name === 'Layout') layoutTid.set(`${e.pid}:${e.tid}`, (layoutTid.get(`${e.pid}:${e.tid}`) ?? 0) + (e.dur ?? 0))
  const main = [...layoutTid.entries()].sort((a, b) => b[1] - a[1])[0]?.[0]
  for (const t of tasks.filter((t) => `${t.pid}:${t.tid}` === main)) {
    const inside = events.filter((e) => e.ph === 'X' && e.pid === t.pid && e.tid === t.tid && e.ts >= t.ts && e.ts + (e.dur ?? 0) <= t.ts + (t.dur ?? 0) && e !== t)
    const byName = new Map<string, number>()
    for (const e of inside) byName.set(e.name, (byName.get(e.name) ?? 0) + (e.dur ?? 0))
    const top = [...byName.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([n, d]) => `${n} ${(d / 1000).toFixed(1)}`)
    traced.push(`${((t.dur ?? 0) / 1000).toFixed(1)} ms: ${top.join(', ')}`)
  }
  console.log(`traced long tasks on the page's main thread:\n${traced.join('\n')}`)
}
const cdp = await context.newCDPSession(page)
await cdp.send('HeapProfiler.collectGarbage')
const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number }
const loaded = await page.evaluate(() => document.querySelectorAll('.message').length)

// Baseline: the browser alone scrolling the same rows. The list is replaced by a static copy of itself (no
// script, same CSS) scrolled by 600 px a frame, back to the bottom at the top, for as many frames: the long
// tasks it has are the machine's, not the app's.
const BASELINE_FRAMES = Math.min(scrolled, 1000)
const { long: baseline, gaps: baselineGaps } = await page.evaluate(async (frames) => {
  const el = document.querySelector<HTMLElement>('.messages')!
  const copy = el.cloneNode(true) as HTMLElement
  el.replaceWith(copy)
  copy.scrollTop = copy.scrollHeight
  const long: number[] = []
  const gaps: number[] = []
  let last = performance.now()
  const observer = new PerformanceObserver((list) => list.getEntries().forEach((e) => long.push(e.duration)))
  observer.observe({ type: 'longtask', buffered: false })
  for (let i = 0; i < frames; i++) {
    copy.scrollTop = copy.scrollTop === 0 ? copy.scrollHeight : Math.max(0, copy.scrollTop - 600)
    const now = await new Promise<number>((r) => requestAnimationFrame(r))
    gaps.push(now - last)
    last = now
  }
  await new Promise((r) => setTimeout(r, 100))
  observer.disconnect()
  return { long, gaps }
}, BASELINE_FRAMES)

await browser.close()
stop()

const pct = (values: number[], p: number) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b)
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`
const frameStats = (gaps: number[]) => `${pct(gaps, 50).toFixed(1)} / ${pct(gaps, 99).toFixed(1)} / ${Math.max(0, ...gaps).toFixed(1)} ms (${gaps.filter((g) => g > 50).length} over 50 ms)`
const perThousand = (count: number, frames: number) => ((count / Math.max(1, frames)) * 1000).toFixed(1)
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim()
const date = new Date().toISOString()
const lines = [
  `# Web client benchmark`,
  ``,
  `- date: ${date}`,
  `- machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Linux ${release()}, Node ${process.version}, ${browser.version()}`,
  `- load average (1, 5, 15 min): ${loadAtStart} at the start, ${loadAtScroll} when the scroll started`,
  `- commit: ${commit}`,
  `- server: node dist/src/server.js, embedded (PGlite), RATE_LIMITING=off; ${MESSAGES} messages in one channel`,
  ``,
  `| figure | value |`,
  `|---|---|`,
  `| JavaScript of the first load, gzip | ${(firstLoadJs / 1024).toFixed(1)} KB |`,
  `| submitting the login form → first message list painted | ${firstPaintMs} ms |`,
  `| POST /messages → visible in the open view, p50 / p99 (${LIVE} messages) | ${pct(appLatency, 50)} / ${pct(appLatency, 99)} ms |`,
  `| same messages at a raw long-poll client (baseline), p50 / p99 | ${pct(rawLatency, 50)} / ${pct(rawLatency, 99)} ms |`,
  `| app / baseline, p50 / p99 | ${ratio(pct(appLatency, 50), pct(rawLatency, 50))} / ${ratio(pct(appLatency, 99), pct(rawLatency, 99))} |`,
  `| scrolling newest → oldest (${scrollMs} ms, ${scrolled} frames): long tasks > 50 ms | ${longTasks.length} (longest ${Math.round(Math.max(0, ...longTasks))} ms) |`,
  `| the same rows as a static copy, scrolled by the browser alone (baseline, ${BASELINE_FRAMES} frames): long tasks > 50 ms | ${baseline.length} (longest ${Math.round(Math.max(0, ...baseline))} ms) |`,
  `| long tasks per 1,000 frames, app / baseline | ${perThousand(longTasks.length, scrolled)} / ${perThousand(baseline.length, BASELINE_FRAMES)} |`,
  `| time between animation frames while scrolling, p50 / p99 / longest: app | ${frameStats(frameGaps)} |`,
  `| the same for the static copy (baseline) | ${frameStats(baselineGaps)} |`,
  `| messages rendered at once while scrolling (window) | ${loaded} |`,
  `| JS heap after GC with the channel loaded | ${(heap.usedSize / 2 ** 20).toFixed(1)} MiB |`,
  ``,
  `Long animation frames (over 50 ms) while scrolling, where their time went: ${longFrames.length === 0 ? 'none' : ''}`,
  ``,
  ...longFrames.map((f) => `- ${f}`),
  ...(longFrames.length > 0 ? [``] : []),
  ...(TRACE ? [`Traced (--trace) long tasks on the page's main thread, ms inside each by trace event (nested events counted in each parent):`, ``, ...traced.map((t) => `- ${t}`), ``] : []),
]
console.log(lines.join('\n'))
const out = path.join(ROOT, 'bench/results')
mkdirSync(out, { recursive: true })
writeFileSync(path.join(out, `${date.slice(0, 10)}-web-client${VARIANT}.md`), lines.join('\n'))
process.exit(0)
