// Every route of the table, fuzzed from its declared parameters (test/support/fuzz.ts):
// never a 5xx, always the envelope, and the server keeps answering. A fixed
// seed and a modest number of runs here; `npm run fuzz` runs long.
import t from 'tap'
import fc from 'fast-check'
import { allRoutes } from '../../src/http/routes/index.js'
import { describeRequest, requestArb, sendFuzzRequest, stillServing, takesJson } from '../support/fuzz.js'
import { fuzzTarget } from '../support/fuzz-app.js'

const SEED = Number(process.env.ROOST_FUZZ_SEED ?? 20261124)
const RUNS = Number(process.env.ROOST_FUZZ_RUNS ?? 300)

t.test('every route answers generated requests with a 4xx or 2xx envelope, never a 5xx', async (t) => {
  const { app, ctx } = await fuzzTarget(t)
  let sent = 0
  await fc.assert(
    fc.asyncProperty(requestArb(ctx), async (request) => {
      const outcome = await sendFuzzRequest(app, request)
      sent++
      if (outcome.problem) throw new Error(`${outcome.problem}: ${describeRequest(request)} → ${outcome.body}`)
      if (sent % 50 === 0 && !(await stillServing(app))) throw new Error('the server stopped answering /healthz')
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  )
  t.ok(await stillServing(app), '/healthz still answers')
  t.pass(`${sent} requests`)
})

// Routes with a parameter that carries JSON (a json() parameter, or a string an action decodes
// as JSON such as `to`): narrows, recipients, drafts, group-setting values, with boundary and
// out-of-range integers, huge floats and NUL bytes inside their arrays and objects.
const jsonRoutes = allRoutes.filter(takesJson)
// Narrows (most of the review's 500s) weigh four times as much as the other JSON routes.
const takesNarrow = (r: (typeof allRoutes)[number]): boolean => Object.hasOwn(r.params, 'narrow')
const weightedJsonRoutes = [...jsonRoutes, ...[1, 2, 3].flatMap(() => jsonRoutes.filter(takesNarrow))]

t.test('routes taking JSON answer nested boundary values with a 4xx or 2xx envelope, never a 5xx', async (t) => {
  const { app, ctx } = await fuzzTarget(t)
  let sent = 0
  await fc.assert(
    fc.asyncProperty(requestArb(ctx, weightedJsonRoutes, { wellFormed: true }), async (request) => {
      const outcome = await sendFuzzRequest(app, request)
      sent++
      if (outcome.problem) throw new Error(`${outcome.problem}: ${describeRequest(request)} → ${outcome.body}`)
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  )
  t.ok(await stillServing(app), '/healthz still answers')
  t.pass(`${sent} requests to ${jsonRoutes.length} routes`)
})

t.test('the fuzzer covers the whole route table, including routes added later', async (t) => {
  const { ctx } = await fuzzTarget(t)
  const seen = new Set(fc.sample(requestArb(ctx), { seed: SEED, numRuns: allRoutes.length * 40 }).map((r) => r.route))
  t.same([...new Set(allRoutes.map((r) => `${r.method} ${r.url}`))].filter((r) => !seen.has(r)), [], 'every route is generated')
})
