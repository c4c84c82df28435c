// Property-based fuzzing of every route in the route table (issue 12 item 6).
// Requests are generated from each route's declared parameters: values of
// the right type near their limits, wrong types, boundary and out-of-range
// integers, empty and huge strings, NUL bytes and lone surrogates, malformed
// and deeply nested JSON, duplicated and unknown parameters, every body
// encoding (query, urlencoded, multipart — also malformed —, JSON, unknown
// content types), with and without credentials. A route added to
// `allRoutes` is fuzzed with no change here.
//
// Used by test/http/fuzz.test.ts (fixed seed, a few hundred requests) and by
// scripts/fuzz.mjs (a long run that prints every 5xx it finds).
import fc from 'fast-check'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { API_PREFIX } from '../../src/app.js'
import { allRoutes } from '../../src/http/routes/index.js'
import type { Route } from '../../src/http/route.js'
import type { User } from '../../src/db/index.js'
import { basicAuth } from './client.js'

type Schema = Record<string, unknown>

/** Real IDs of the fixture's realm, so that generated requests also reach past the "no such object" checks. */
export interface FuzzContext {
  host: string
  users: User[]
  ids: number[]
}

export interface FuzzRequest {
  route: string
  inject: InjectOptions
}

export interface FuzzOutcome {
  request: FuzzRequest
  status: number
  body: string
  /** What is wrong with the answer, if anything (a 5xx, a body that is not the envelope). */
  problem: string | undefined
}

const BOUNDARY_INTS = [0, 1, -1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 53, -(2 ** 53), 2 ** 63]
const NASTY_STRINGS = [
  '',
  ' ',
  'a\u0000b',
  '\u0000',
  '\ud800',
  'x\udc00y',
  'trailing\\',
  '%',
  '_%\\',
  '1e400',
  '-0',
  '0x10',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  '[1,',
  '{"a":',
  '\u202e\u200b',
  '🦜'.repeat(40),
  "'; DROP TABLE message; --",
  '<script>alert(1)</script>',
  '../../../etc/passwd',
]

const nastyString = fc.oneof(
  { weight: 7, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.integer({ min: 61, max: 70_000 }).map((n) => 'x'.repeat(n)) },
)

function deepJson(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth)
}

/**
 * Numbers JavaScript cannot write into JSON as such (1e400 would become
 * `null`, 9007199254740993 would lose its last digit): generated as a marked
 * string and spliced into the JSON text as a bare number by `toJson`.
 */
const RAW_NUMBER_MARK = '\u0001raw-number:'
const RAW_NUMBERS = ['1e400', '-1e400', '1e21', '-1e21', '9007199254740993', '-9007199254740993', '2147483648', '-2147483649', '1e308', '4.9e-324', '-0', '0.5']
const rawNumber = fc.constantFrom(...RAW_NUMBERS).map((n) => `${RAW_NUMBER_MARK}${n}`)

/** JSON.stringify, with the marked raw numbers written as numbers. */
export function toJson(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null'
  return text.includes('\\u0001raw-number:') ? text.replace(/"\\u0001raw-number:([^"]+)"/g, '$1') : text
}

/** A scalar parameter's text: a marked raw number as its digits, other strings as they are, anything else as JSON. */
function scalarText(value: unknown): string {
  if (typeof value !== 'string') return toJson(value)
  return value.startsWith(RAW_NUMBER_MARK) ? value.slice(RAW_NUMBER_MARK.length) : value
}

/** Values meant to break what reads inside a JSON parameter: boundary and out-of-range integers, huge floats, NUL bytes. */
const nestedNasty: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...BOUNDARY_INTS) },
  { weight: 4, arbitrary: rawNumber },
  { weight: 2, arbitrary: fc.constantFrom('a\u0000b', '\u0000', '2147483648', '-1', '1e400', '') },
  { weight: 1, arbitrary: fc.constantFrom(null, true, 1.5, [], {}) },
)

/** A nested value: a nasty scalar, or a short list of them (a `dm` operand, a recipient list). */
const nestedValue: fc.Arbitrary<unknown> = fc.oneof({ weight: 3, arbitrary: nestedNasty }, { weight: 1, arbitrary: fc.array(nestedNasty, { minLength: 1, maxLength: 3 }) })

/** Operators whose operand may be a number (or a list of numbers), then the rest. */
const NUMERIC_OPERATORS = ['channel', 'stream', 'sender', 'dm', 'pm-with', 'dm-including', 'group-pm-with', 'id', 'near', 'with']
const OTHER_OPERATORS = ['topic', 'is', 'has', 'in', 'search', 'channels']
const narrowOperator = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...NUMERIC_OPERATORS) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_OPERATORS) })

/** A narrow-shaped list whose operands (and at times operators and `negated`) are nested nasty values. */
const nastyNarrow: fc.Arbitrary<unknown> = fc.array(
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ operator: narrowOperator, operand: nestedValue, negated: fc.option(fc.oneof({ weight: 4, arbitrary: fc.boolean() }, { weight: 1, arbitrary: nestedNasty }), { nil: undefined }) }) },
    { weight: 1, arbitrary: fc.tuple(narrowOperator, nestedValue) },
    { weight: 1, arbitrary: fc.record({ operator: nestedNasty, operand: nestedNasty }) },
  ).map((term) => (term && typeof term === 'object' && !Array.isArray(term) ? Object.fromEntries(Object.entries(term).filter(([, v]) => v !== undefined)) : term)),
  { minLength: 1, maxLength: 2 },
)

/** A JSON value of any shape (for wrong-type and nesting cases). */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 2 ** 31, 1.5, '', 'x', [], {}, [[]], [null], { '': null }),
  fc.jsonValue({ maxDepth: 3 }),
)

function idArb(ctx: FuzzContext): fc.Arbitrary<number> {
  return fc.oneof(fc.constantFrom(...ctx.ids), fc.constantFrom(...BOUNDARY_INTS), fc.integer())
}

/** A structured value for a schema: right-typed most of the time, with boundary and wrong values mixed in. */
function structured(schema: Schema, ctx: FuzzContext, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 4) return anyJson
  const wrong = anyJson
  const members = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined
  let right: fc.Arbitrary<unknown>
  if (schema.const !== undefined) right = fc.constant(schema.const)
  else if (Array.isArray(members) && members.length > 0) right = fc.oneof(...members.map((m) => structured(m, ctx, depth + 1)))
  else if (schema.type === 'integer' || schema.type === 'number') {
    right = fc.oneof(idArb(ctx), fc.double(), fc.constant(1e300), rawNumber)
  } else if (schema.type === 'boolean') right = fc.boolean()
  else if (schema.type === 'string') {
    // Many string parameters hold JSON an action decodes (`to`, message_retention_days): nested nasty values in them too.
    right = fc.oneof(
      { weight: 4, arbitrary: nastyString },
      { weight: 2, arbitrary: fc.constantFrom('general', 'design', 'secret', 'read', 'starred', 'add', 'remove', 'newest', 'oldest', 'first_unread', 'stream', 'private', 'channel') },
      { weight: 1, arbitrary: (depth === 0 ? nestedValue.map(toJson) : nestedNasty) },
    )
  }
  else if (schema.type === 'null') right = fc.constant(null)
  else if (schema.type === 'array') {
    const items = (schema.items ?? {}) as Schema
    right = fc.oneof(
      { weight: 4, arbitrary: fc.array(structured(items, ctx, depth + 1), { maxLength: 5 }) },
      { weight: 1, arbitrary: fc.integer({ min: 100, max: 3000 }).chain((n) => fc.constant(Array.from({ length: n }, (_, i) => i + 1))) },
    )
  } else if (schema.type === 'object') {
    const props = (schema.properties ?? {}) as Record<string, Schema>
    const entries = Object.entries(props).map(([k, v]) => [k, fc.option(structured(v, ctx, depth + 1), { nil: undefined })] as const)
    right = fc.tuple(fc.record(Object.fromEntries(entries)), fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 2 })).map(([known, extra]) => {
      const out: Record<string, unknown> = { ...extra }
      for (const [k, v] of Object.entries(known)) if (v !== undefined) out[k] = v
      return out
    })
  } else {
    // No declared shape (a narrow, custom profile field data): shaped values with nasty numbers and strings inside.
    right = fc.oneof({ weight: 3, arbitrary: nastyNarrow }, { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), nestedValue, { maxKeys: 3 }) }, { weight: 1, arbitrary: anyJson })
  }
  return fc.oneof({ weight: 5, arbitrary: right }, { weight: 1, arbitrary: wrong })
}

/** A parameter as it travels: a string (or, in a JSON body, any JSON value). */
function wireValue(schema: Schema, ctx: FuzzContext): fc.Arbitrary<unknown> {
  const isJson = schema['x-roost-json'] === true
  if (isJson) {
    return fc.oneof(
      { weight: 6, arbitrary: structured(schema, ctx).map(toJson) },
      { weight: 1, arbitrary: fc.constantFrom('[1,', '{"a":', '["\\ud800"]', '["a\\u0000b"]', '[1e400]', '[-1]', '[0]', `[${2 ** 31}]`, '[[["x"]]]', '') },
      { weight: 1, arbitrary: fc.integer({ min: 20, max: 20_000 }).map(deepJson) },
      { weight: 1, arbitrary: nastyString },
    )
  }
  return fc.oneof(
    { weight: 4, arbitrary: structured(schema, ctx).map(scalarText) },
    { weight: 3, arbitrary: nastyString },
    { weight: 1, arbitrary: fc.constantFrom(...BOUNDARY_INTS.map(String), '1e400', '1.5', ' 7 ', '+1', '00012') },
  )
}

/** String parameters whose text an action decodes as JSON (a message's `to`, a channel's retention). */
export const JSON_TEXT_PARAMS: ReadonlySet<string> = new Set(['to', 'message_retention_days'])

/** Whether a route takes JSON: a json() parameter or one of JSON_TEXT_PARAMS. */
export function takesJson(route: Route): boolean {
  return Object.entries(route.params).some(([name, schema]) => (schema as Schema)['x-roost-json'] === true || JSON_TEXT_PARAMS.has(name))
}

/** A parameter for a well-formed request: JSON ones right-shaped with nasty values inside, the rest plausible. */
function nestedWireValue(name: string, schema: Schema, ctx: FuzzContext): fc.Arbitrary<unknown> {
  if (schema['x-roost-json'] === true) return structured(schema, ctx).map(toJson)
  if (JSON_TEXT_PARAMS.has(name)) return fc.oneof({ weight: 1, arbitrary: saneScalar(schema, ctx, name) }, { weight: 2, arbitrary: nestedValue.map(toJson) })
  return saneScalar(schema, ctx, name)
}

/** Plausible values of string parameters by name (the rest get common words). */
const WORDS_BY_NAME: Record<string, string[]> = {
  anchor: ['newest', 'oldest', 'first_unread'],
  type: ['stream', 'private', 'direct', 'channel'],
  op: ['add', 'remove', 'start', 'stop'],
  flag: ['read', 'starred'],
  to: ['general', 'design'],
  topic: ['fuzz', 'other'],
  content: ['hello', '@**Mia Member** hi'],
}

/** A plausible value of a scalar parameter, as text: its default, a fixture ID, a boolean, a word it takes. */
function saneScalar(schema: Schema, ctx: FuzzContext, name = ''): fc.Arbitrary<string> {
  if (schema.const !== undefined) return fc.constant(String(schema.const))
  if (schema.default !== undefined && typeof schema.default !== 'object') return fc.constant(String(schema.default))
  const words = WORDS_BY_NAME[name]
  if (words) return fc.constantFrom(...words)
  const members = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined
  if (Array.isArray(members) && members.length > 0) return fc.oneof(...members.map((m) => saneScalar(m, ctx, name)))
  if (schema.type === 'integer' || schema.type === 'number') return fc.constantFrom(...ctx.ids, 0, 1).map(String)
  if (schema.type === 'boolean') return fc.boolean().map(String)
  return fc.constantFrom('general', 'newest', 'oldest', 'first_unread', 'stream', 'private', 'channel', 'direct', 'add', 'remove', 'read', 'starred', 'fuzz', 'x')
}

/** encodeURIComponent, except that a lone surrogate becomes the (invalid) UTF-8 of one. */
function encodePathSegment(value: string): string {
  try {
    return encodeURIComponent(value)
  } catch {
    return encodeURIComponent(value.replace(/[\uD800-\uDFFF]/g, '')) + '%ED%A0%80'
  }
}

function pathValue(schema: Schema | undefined, ctx: FuzzContext): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: (schema ? wireValue(schema, ctx) : nastyString).map((v) => encodePathSegment(String(v))) },
    { weight: 2, arbitrary: fc.constantFrom(...ctx.ids.map(String), 'me', '0', '-1', String(2 ** 31), '1e400') },
    { weight: 1, arbitrary: fc.constantFrom('%', '%E0%A4%A', '%00', '%ED%A0%80', 'a'.repeat(150), '..%2F..%2Fetc') },
  )
}

const UNKNOWN_PARAMS = fc.dictionary(fc.constantFrom('zzz', 'client', '__proto__', 'constructor', 'a[b]', ''), nastyString, { maxKeys: 2 })

type Encoding = 'query' | 'form' | 'multipart' | 'multipart-broken' | 'json' | 'unknown-type' | 'garbage'

function multipartBody(fields: [string, string][], boundary: string, file: { name: string; type: string; data: string } | undefined): string {
  let out = ''
  for (const [k, v] of fields) out += `--${boundary}\r\nContent-Disposition: form-data; name="${k.replace(/"/g, '%22')}"\r\n\r\n${v}\r\n`
  if (file) {
    out += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name.replace(/"/g, '%22')}"\r\nContent-Type: ${file.type}\r\n\r\n${file.data}\r\n`
  }
  return `${out}--${boundary}--\r\n`
}

const fileArb = fc.option(
  fc.record({
    name: fc.oneof(fc.constantFrom('a.txt', '', '.', '..', 'x'.repeat(300) + '.png', 'é'.repeat(200) + '.txt', 'name\\', 'a\u0000b.txt', '../../x'), nastyString),
    type: fc.constantFrom('text/plain', '', 'x\u0000y', 'image/png; charset=utf-8', 'a'.repeat(400)),
    data: fc.string({ maxLength: 50 }),
  }),
  { nil: undefined },
)

export interface RequestArbOptions {
  /**
   * Requests that pass the outer checks (credentials of a fixture user, a
   * readable body encoding, parameters mostly present), so that the values
   * inside JSON parameters reach the code that reads them.
   */
  wellFormed?: boolean
}

/** One request to one route of the table. */
export function requestArb(ctx: FuzzContext, routes: Route[] = allRoutes, options: RequestArbOptions = {}): fc.Arbitrary<FuzzRequest> {
  const wellFormed = options.wellFormed === true
  const userAuth = fc.nat({ max: ctx.users.length - 1 }).map((i) => ({ kind: 'user' as const, i }))
  return fc.constantFrom(...routes).chain((route) => {
    const declared = Object.entries(route.params as Record<string, Schema>)
    const pathNames = new Set([...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string))
    if (route.url.includes('*')) pathNames.add('*')
    const bodyParams = declared.filter(([name]) => !pathNames.has(name))
    const pathArbs = Object.fromEntries(
      [...pathNames].map((name) => [name, wellFormed ? fc.constantFrom(...ctx.ids.map(String)) : pathValue(route.params[name] as Schema | undefined, ctx)]),
    )
    const paramArbs = Object.fromEntries(bodyParams.map(([name, schema]) => [name, fc.option(wellFormed ? nestedWireValue(name, schema, ctx) : wireValue(schema, ctx), { nil: undefined, freq: wellFormed ? 8 : 3 })]))
    return fc.record({
      path: fc.record(pathArbs),
      params: fc.record(paramArbs),
      unknown: wellFormed ? fc.constant({}) : UNKNOWN_PARAMS,
      duplicate: wellFormed ? fc.constant(false) : fc.boolean(),
      encoding: wellFormed
        ? fc.constantFrom<Encoding>(...(route.method === 'GET' ? (['query'] as const) : (['query', 'form', 'multipart', 'json'] as const)))
        : fc.constantFrom<Encoding>('query', 'form', 'form', 'multipart', 'multipart-broken', 'json', 'unknown-type', 'garbage'),
      auth: wellFormed ? userAuth : fc.oneof(
        { weight: 6, arbitrary: userAuth },
        { weight: 1, arbitrary: fc.constant({ kind: 'none' as const, i: 0 }) },
        { weight: 1, arbitrary: fc.constantFrom('Basic', 'Basic !!!', 'Bearer x', 'Basic ' + Buffer.from('a:b').toString('base64'), 'Basic ' + 'QQ=='.repeat(500)).map((h) => ({ kind: 'junk' as const, i: 0, header: h })) },
      ),
      file: fileArb,
    }).map(({ path, params, unknown, duplicate, encoding, auth, file }): FuzzRequest => {
      let url = (route.outsideApi ? '' : API_PREFIX) + route.url
      for (const [name, value] of Object.entries(path)) url = name === '*' ? url.replace('*', value) : url.replace(`:${name}`, value || '1')
      const fields: [string, string][] = []
      for (const [k, v] of Object.entries({ ...unknown, ...params })) {
        if (v === undefined) continue
        const text = typeof v === 'string' ? v : JSON.stringify(v)
        fields.push([k, text])
        if (duplicate) fields.push([k, text])
      }
      const headers: Record<string, string> = { host: ctx.host }
      if (auth.kind === 'user') {
        const user = ctx.users[auth.i] as User
        headers.authorization = basicAuth(user.deliveryEmail, user.apiKey)
      } else if (auth.kind === 'junk') headers.authorization = (auth as { header: string }).header
      const inject: InjectOptions = { method: route.method, url, headers }
      const qs = new URLSearchParams(fields).toString()
      switch (encoding) {
        case 'query':
          inject.url = qs ? `${url}?${qs}` : url
          break
        case 'form':
          headers['content-type'] = 'application/x-www-form-urlencoded'
          inject.payload = qs
          break
        case 'multipart':
        case 'multipart-broken': {
          const boundary = 'fuzzBoundary7'
          let body = multipartBody(fields, boundary, file)
          if (encoding === 'multipart-broken') body = body.slice(0, Math.max(0, body.length - 7 - (fields.length % 5) * 3)) + (fields.length % 2 ? '\r\nContent-Disposition: junk' : '')
          headers['content-type'] = fields.length % 3 === 0 && encoding === 'multipart-broken' ? 'multipart/form-data' : `multipart/form-data; boundary=${boundary}`
          inject.payload = body
          break
        }
        case 'json':
          headers['content-type'] = 'application/json'
          inject.payload = JSON.stringify(Object.fromEntries(fields))
          break
        case 'unknown-type':
          headers['content-type'] = 'application/x-fuzz'
          inject.payload = qs
          break
        case 'garbage':
          headers['content-type'] = fields.length % 2 ? 'application/json' : 'application/x-www-form-urlencoded'
          inject.payload = fields.length % 2 ? '{"a":[1,' : '%%%&&=&=%E0%A4%A'
          break
      }
      return { route: `${route.method} ${route.url}`, inject }
    })
  })
}

/** Sends the request; never a 5xx, and the error envelope (or, for a successful raw route, anything) back. */
export async function sendFuzzRequest(app: FastifyInstance, request: FuzzRequest): Promise<FuzzOutcome> {
  const res: LightMyRequestResponse = await app.inject(request.inject)
  return { request, status: res.statusCode, body: res.body.slice(0, 500), problem: problemOf(res) }
}

function problemOf(res: LightMyRequestResponse): string | undefined {
  if (res.statusCode >= 500) return `status ${res.statusCode}`
  const isJson = String(res.headers['content-type'] ?? '').includes('application/json')
  if (res.statusCode < 300 && !isJson) return undefined // a raw route's file or page
  if (res.statusCode >= 300 && res.statusCode < 400) return undefined // redirects of pages
  let body: Record<string, unknown>
  try {
    body = JSON.parse(res.body) as Record<string, unknown>
  } catch {
    return `status ${res.statusCode} with a body that is not JSON`
  }
  if (res.statusCode >= 400) {
    if (body.result !== 'error' || typeof body.msg !== 'string' || typeof body.code !== 'string') return `status ${res.statusCode} without the error envelope`
  } else if (body.result !== 'success' || body.msg !== '') return `status ${res.statusCode} without the success envelope`
  return undefined
}

/** The server still answers: /healthz, and an authenticated request. */
export async function stillServing(app: FastifyInstance): Promise<boolean> {
  const res = await app.inject({ method: 'GET', url: '/healthz' })
  return res.statusCode === 200
}

/** A short description of a request for reports (long values cut). */
export function describeRequest(request: FuzzRequest): string {
  const cut = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}…(${s.length} chars)` : s)
  const { method, url, headers, payload } = request.inject as { method: string; url: string; headers: Record<string, string>; payload?: string }
  return `${method} ${cut(url)} [${headers['content-type'] ?? 'no body'}${headers.authorization ? ', auth' : ''}] ${payload ? cut(JSON.stringify(payload)) : ''}`
}
