#!/usr/bin/env node
// The long run of the route fuzzer (test/support/fuzz.ts): N generated
// requests (default 20,000) against an in-process app on PGlite (or on
// ROOST_TEST_DATABASE_URL), printing every 5xx or broken envelope it finds.
// Of every chunk, seven tenths are requests of any shape to every route and
// three tenths well-formed requests to the routes taking JSON, with boundary
// and out-of-range integers, huge floats and NUL bytes inside their arrays
// and objects (narrows, recipients, drafts, group-setting values).
//   npm run fuzz -- [requests] [seed]
// Needs `npm run build` first (npm run fuzz does it). Exit status 1 when anything was found.
import fc from 'fast-check'

const runs = Number(process.argv[2] ?? 20_000)
const seed = Number(process.argv[3] ?? Date.now() % 2 ** 31)
// The support modules import tap (for the test database's teardown); its 30 s
// default timeout would end a long run midway.
process.env.TAP_TIMEOUT = '0'
const { describeRequest, requestArb, sendFuzzRequest, stillServing, takesJson } = await import('../dist/test/support/fuzz.js')
const { allRoutes } = await import('../dist/src/http/routes/index.js')
const jsonRoutes = allRoutes.filter(takesJson)
const { fuzzTarget } = await import('../dist/test/support/fuzz-app.js')

let teardowns = []
let target = await fuzzTarget({ teardown: (fn) => teardowns.push(fn) })
console.log(`fuzzing ${runs} requests, seed ${seed}`)
const byProblem = new Map()
const byStatus = new Map()
let done = 0
const CHUNK = 500
for (let start = 0; start < runs; start += CHUNK) {
  if (start > 0) {
    // A fresh organization per chunk: generated admin requests deactivate users and archive channels.
    if (!(await stillServing(target.app))) {
      console.log('✖ /healthz stopped answering')
      byProblem.set('healthz', 1)
      break
    }
    for (const fn of teardowns.reverse()) await fn()
    teardowns = []
    target = await fuzzTarget({ teardown: (fn) => teardowns.push(fn) })
  }
  const { app, ctx } = target
  const size = Math.min(CHUNK, runs - start)
  const nested = Math.round(size * 0.3)
  const batch = [
    ...fc.sample(requestArb(ctx), { seed: seed + start, numRuns: size - nested }),
    ...fc.sample(requestArb(ctx, jsonRoutes, { wellFormed: true }), { seed: seed + start + 1, numRuns: nested }),
  ]
  for (const request of batch) {
    const outcome = await sendFuzzRequest(app, request)
    done++
    byStatus.set(outcome.status, (byStatus.get(outcome.status) ?? 0) + 1)
    if (outcome.problem) {
      const key = `${request.route}: ${outcome.problem}`
      const seen = byProblem.get(key) ?? 0
      byProblem.set(key, seen + 1)
      if (seen < 3) console.log(`\n✖ ${key}\n  ${describeRequest(request)}\n  → ${outcome.body}`)
    }
  }
  process.stdout.write(`  ${done} requests, ${[...byProblem.values()].reduce((a, b) => a + b, 0)} problems\n`)
}
console.log(`\n${done} requests (seed ${seed}); statuses: ${[...byStatus].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(' ')}; ${byProblem.size} distinct problems`)
for (const [key, count] of byProblem) console.log(`  ${count}× ${key}`)
for (const fn of teardowns.reverse()) await fn()
process.exit(byProblem.size > 0 ? 1 : 0)
