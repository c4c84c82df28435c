// Every event type and op of the schemas (src/events/schemas EVENT_SCHEMAS)
// is covered by a state check: some checkStateAfter call in the tests
// (test/support/state-check.ts) names it in expectTypes or expectLegacyTypes,
// as `type` (a type without ops) or `type/op`. Each such call asserts, when
// its own test runs, that the event was delivered and that applying it
// leaves the client where a fresh register does; this file asserts that
// together they name every event of the schemas, by reading the test
// sources, so the answer does not depend on which test processes ran.
// A new event type or op fails here until a state check covers it. A file
// that holds state checks may skip none of its tests (skip, todo, only), so
// that every check this file counts also runs.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TSchema } from 'typebox'
import { EVENT_SCHEMAS } from '../../src/events/schemas/index.js'
import { ROOT } from '../support/root.js'

/** Event types no action publishes, with the reason; nothing else may be left uncovered. */
const NOT_FROM_ACTIONS: Record<string, string> = {
  heartbeat: 'sent by the queue to an idle long-poll, never published; it carries no state',
}

/** Event ops after which no fresh register exists to compare with, with the test that asserts their delivery instead. */
const NO_REGISTER_AFTER: Record<string, string> = {
  'realm/deactivated': 'every request of the organization is refused afterwards; test/cli/organizations.test.ts asserts the event on a live queue',
}

type Node = TSchema & { anyOf?: Node[]; const?: unknown; properties?: Record<string, Node> }
const constants = (schema: Node | undefined): string[] =>
  schema === undefined ? [] : schema.anyOf ? schema.anyOf.flatMap(constants) : typeof schema.const === 'string' ? [schema.const] : []

/** `type` or `type/op` for every form of every schema. */
function schemaEvents(): Set<string> {
  const out = new Set<string>()
  for (const schema of Object.values(EVENT_SCHEMAS) as Node[]) {
    for (const form of schema.anyOf ?? [schema]) {
      for (const type of constants(form.properties?.type)) {
        const ops = constants(form.properties?.op)
        if (ops.length === 0) out.add(type)
        for (const op of ops) out.add(`${type}/${op}`)
      }
    }
  }
  return out
}

function testSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'support' ? [] : testSources(file)
    return entry.name.endsWith('.test.ts') ? [file] : []
  })
}

/** What each test file's state checks name, comments left out. */
function namedInTests(): Map<string, string[]> {
  const named = new Map<string, string[]>()
  for (const file of testSources(path.join(ROOT, 'test'))) {
    const source = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
    if (!source.includes('checkStateAfter(')) continue
    for (const list of source.matchAll(/expect(?:Legacy)?Types:\s*\[([^\]]*)\]/g)) {
      for (const [, name] of (list[1] ?? '').matchAll(/'([^']+)'/g)) {
        const files = named.get(name as string) ?? []
        named.set(name as string, [...files, path.relative(ROOT, file)])
      }
    }
  }
  return named
}

t.test('every event type and op of the schemas is covered by a state check', async (t) => {
  const events = schemaEvents()
  const named = namedInTests()
  t.ok(events.size > 40, `the schemas describe ${events.size} event types and ops`)
  const uncovered = [...events].filter((e) => !named.has(e) && !(e.split('/')[0] as string in NOT_FROM_ACTIONS) && !(e in NO_REGISTER_AFTER)).sort()
  t.same(uncovered, [], 'no event type or op lacks a state check')
  // A name that is not an event of the schemas covers nothing: a typo must not pass for coverage.
  const unknown = [...named.keys()].filter((name) => !events.has(name) && ![...events].some((e) => e.startsWith(`${name}/`))).sort()
  t.same(unknown, [], 'every name in expectTypes is an event of the schemas')
  for (const type of Object.keys(NOT_FROM_ACTIONS)) t.ok(type in EVENT_SCHEMAS, `${type}: an event of the schemas`)
  for (const name of Object.keys(NO_REGISTER_AFTER)) t.ok(events.has(name), `${name}: an event of the schemas`)
})

/** A test that is skipped, left to do or singled out with only, in a source with comments removed. */
const SKIPPING = /\.(?:skip|todo|only)\(|\b(?:skip|todo|only):(?!\s*false\b)/

t.test('no file that holds state checks skips a test', async (t) => {
  const skipping = testSources(path.join(ROOT, 'test'))
    .filter((file) => {
      const source = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
      return source.includes('checkStateAfter(') && SKIPPING.test(source)
    })
    .filter((file) => file !== fileURLToPath(import.meta.url).replace(/\/dist\/test\//, '/test/').replace(/\.js$/, '.ts'))
    .map((file) => path.relative(ROOT, file))
  t.same(skipping, [], 'every state check the coverage counts runs')
  t.ok(SKIPPING.test("t.test('x', { skip: 'later' }, fn)") && SKIPPING.test('t.skip(') && !SKIPPING.test('{ skip: false }'), 'the reader sees skip, todo and only')
})

t.test('the coverage reading sees a missing op', async (t) => {
  // The reader itself: a schema form it would miss could never fail the test above.
  const events = schemaEvents()
  for (const expected of ['stream/update', 'subscription/peer_remove', 'user_group/add_subgroups', 'realm/update_dict', 'message', 'muted_users', 'delete_message']) {
    t.ok(events.has(expected), `${expected} is read from the schemas`)
  }
  t.notOk(events.has('stream'), 'a type with ops is counted by op only')
})
