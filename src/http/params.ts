// Parameter declarations and the one parsing step that merges query string,
// form body and path into a validated `input` (STYLE.md "Parameters").
import { Type, type TSchema, type TOptional } from 'typebox'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { ApiError, badRequest, confusingParameters, invalidJson, missingArgument, tooManyItems } from '../errors.js'
import { INT32_MAX, INT32_MIN } from '../domain/int-range.js'

/** Every parsing mark below starts with this; the OpenAPI description leaves them out. */
export const PARSING_MARK_PREFIX = 'x-roost-'
export const JSON_MARK = 'x-roost-json'
export const ALIAS_MARK = 'x-roost-alias'
const UPSTREAM_ALIAS_MARK = 'x-roost-upstream-alias'
const NULL_ABSENT_MARK = 'x-roost-null-absent'

/** An array or object parameter: arrives JSON-encoded (spec §Conventions). */
export function json<T extends TSchema>(schema: T): T {
  return { ...schema, [JSON_MARK]: true }
}

/** A deprecated name still accepted for the parameter; sending both is an error. */
export function alias<T extends TSchema>(schema: T, name: string): T {
  return { ...schema, [ALIAS_MARK]: name }
}

/**
 * Upstream's name for a parameter the spec renamed (`client_gravatar` for
 * `client_extavatar`): accepted like an alias while UPSTREAM_NAMES is on;
 * with it off, the name is not declared (listed in ignored_parameters_unsupported).
 */
export function upstreamAlias<T extends TSchema>(schema: T, name: string): T {
  return { ...schema, [UPSTREAM_ALIAS_MARK]: name }
}

/** JSON `null` (the string "null") means the parameter was not given, as upstream's `Json[T] | None = None`. */
export function nullAsAbsent<T extends TSchema>(schema: T): T {
  return { ...schema, [NULL_ABSENT_MARK]: true }
}

export function optional<T extends TSchema>(schema: T, options: { default?: unknown } = {}): TOptional<T> {
  // typebox 1.x types Type.Optional conditionally; the result is always optional.
  const withDefault = options.default === undefined ? schema : { ...schema, default: options.default }
  return Type.Optional(withDefault as T) as TOptional<T>
}

type Raw = Record<string, unknown>

/** PostgreSQL `integer`: the range of every ID column and of most integer columns. */
export { INT32_MAX, INT32_MIN }
/** JSON nesting a parameter may have (narrows and drafts need 3; upstream sets no limit, but deep values cost recursion). */
export const MAX_JSON_DEPTH = 32

/** An ID parameter (`id`, `*_id`, `*_ids`; not `last_*` cursors such as last_event_id): positive integers only. */
function isIdName(name: string): boolean {
  return !name.startsWith('last_') && (name === 'id' || name.endsWith('_id') || name.endsWith('_ids'))
}

/**
 * A JSON value of no declared shape (`Type.Unknown()`: narrows, custom
 * profile field data) as validated: every number anywhere inside it within
 * the 32-bit range, so that an operand such as `{"operator":"id","operand":2147483648}`
 * is refused here, naming its path, before any code reads it.
 */
const BOUNDED_JSON_REF = '#/$defs/roostBoundedJson'
const BOUNDED_JSON = {
  if: { type: 'number' },
  then: { minimum: INT32_MIN, maximum: INT32_MAX },
  else: {
    if: { type: 'array' },
    then: { items: { $ref: BOUNDED_JSON_REF } },
    else: { if: { type: 'object' }, then: { additionalProperties: { $ref: BOUNDED_JSON_REF } } },
  },
}

/** Keywords that give a schema a shape; a schema with none of them (`Type.Unknown()`) accepts any value. */
const SHAPE_KEYWORDS = ['type', 'anyOf', 'oneOf', 'allOf', 'not', 'const', 'enum', '$ref', 'properties', 'items', 'if']

function isUnshaped(s: Record<string | symbol, unknown>): boolean {
  return SHAPE_KEYWORDS.every((k) => s[k] === undefined)
}

/**
 * The schema as validated: every integer without declared bounds gets the
 * 32-bit range of the columns it is compared with (and, in ID parameters, a
 * minimum of 1), every other number a finite range (JSON's `1e400` decodes
 * to Infinity), and every value of no declared shape the range for each
 * number inside it (BOUNDED_JSON), so no value outside them reaches a query.
 * A route that needs another range declares `minimum`/`maximum` itself.
 */
function hardened(schema: unknown, id: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((s) => hardened(s, id))
  if (schema === null || typeof schema !== 'object') return schema
  const s = schema as Record<string | symbol, unknown>
  if (isUnshaped(s)) return { ...s, $ref: BOUNDED_JSON_REF }
  const out: Record<string | symbol, unknown> = { ...s }
  for (const key of ['items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties', 'not', 'prefixItems']) {
    if (s[key] !== undefined && typeof s[key] === 'object') out[key] = hardened(s[key], id)
  }
  for (const key of ['properties', 'patternProperties']) {
    const props = s[key] as Record<string, unknown> | undefined
    if (props && typeof props === 'object') {
      out[key] = Object.fromEntries(Object.entries(props).map(([name, sub]) => [name, hardened(sub, isIdName(name))]))
    }
  }
  const types = Array.isArray(s.type) ? (s.type as unknown[]) : [s.type]
  if (types.includes('integer') || types.includes('number')) {
    const integer = types.includes('integer')
    if (s.minimum === undefined && s.exclusiveMinimum === undefined) out.minimum = !integer ? -Number.MAX_VALUE : id ? 1 : INT32_MIN
    if (s.maximum === undefined && s.exclusiveMaximum === undefined) out.maximum = integer ? INT32_MAX : Number.MAX_VALUE
  }
  return out
}

/** The top-level schema of a route's parameters, hardened, with the definitions its references use. */
function validatedSchema(params: Record<string, TSchema>): object {
  return { ...(hardened(Type.Object(params), false) as object), $defs: { roostBoundedJson: BOUNDED_JSON } }
}

/**
 * False for text holding a lone UTF-16 surrogate (from JSON escapes such as
 * "\ud800"): not text, and PostgreSQL cannot store it. Node 20's
 * String.prototype.isWellFormed (ES2024; the compiler's library is ES2022).
 */
const wellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed()

/** Upstream's own wording for the two texts it checks itself (message content, topic). */
function nulError(name: string, path: string): ApiError {
  if (name === 'content') return badRequest('Message must not contain null bytes')
  if (name === 'topic' || name === 'subject' || name === 'topic_name') return badRequest('Topic must not contain null bytes')
  return badRequest(`${path} must not contain null bytes`)
}

/**
 * Checks every string (and object key) of a decoded parameter for NUL
 * characters and lone surrogates, and its nesting depth; iteratively, so no
 * value can exhaust the stack.
 */
function inspectValue(param: string, value: unknown, fromJson: boolean): void {
  // Most parameters are one string or a number: checked without the stack.
  if (typeof value === 'string') {
    if (value.includes('\0')) throw nulError(param, param)
    if (!wellFormed(value)) throw fromJson ? invalidJson(param) : badRequest(`${param} is not valid UTF-8`)
    return
  }
  if (value === null || typeof value !== 'object') return
  const stack: { value: unknown; path: string; key: string; depth: number }[] = [{ value, path: param, key: param, depth: 0 }]
  while (stack.length > 0) {
    const { value: v, path, key, depth } = stack.pop() as { value: unknown; path: string; key: string; depth: number }
    if (typeof v === 'string') {
      if (v.includes('\0')) throw nulError(key, path)
      if (!wellFormed(v)) throw fromJson ? invalidJson(param) : badRequest(`${path} is not valid UTF-8`)
      continue
    }
    if (v === null || typeof v !== 'object') continue
    if (depth >= MAX_JSON_DEPTH) throw badRequest(`${param} is nested too deeply (limit: ${MAX_JSON_DEPTH} levels)`)
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: `${path}[${i}]`, key, depth: depth + 1 })
    } else {
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        if (k.includes('\0')) throw nulError('', `${path} key`)
        if (!wellFormed(k)) throw fromJson ? invalidJson(param) : badRequest(`${path} key is not valid UTF-8`)
        stack.push({ value: item, path: `${path}["${k}"]`, key: k, depth: depth + 1 })
      }
    }
  }
}

export interface ParseOptions {
  /** Accept upstream's names of renamed parameters (UPSTREAM_NAMES); default true. */
  upstreamNames?: boolean
  /** Names that came from the URL path: an integer there is digits only, no spaces or sign but `-` (`/streams/%201` is no channel). */
  pathNames?: ReadonlySet<string>
}

export interface ParamParser {
  /** Every accepted name, upstream aliases included. */
  declared: Set<string>
  /** Whether `name` is a parameter of the route under these options. */
  accepts(name: string, options?: ParseOptions): boolean
  parse(raw: Raw, options?: ParseOptions): Record<string, unknown>
}

const RANGE_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']

const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true, coerceTypes: false })

function schemaAt(schema: TSchema): Record<string, unknown> {
  return schema as unknown as Record<string, unknown>
}

type ScalarKind = 'integer' | 'number' | 'boolean' | 'string' | 'other'

function scalarKind(schema: Record<string, unknown>): ScalarKind {
  const type = schema.type
  if (type === 'integer' || type === 'number' || type === 'boolean' || type === 'string') return type
  const members = (schema.anyOf ?? schema.oneOf) as Record<string, unknown>[] | undefined
  if (Array.isArray(members) && members.length > 0) {
    const kinds = new Set(members.map((m) => (m.const !== undefined ? typeof m.const : scalarKind(m))))
    if (kinds.size === 1) {
      const only = [...kinds][0]
      if (only === 'number') return members.every((m) => Number.isInteger(m.const) || m.type === 'integer') ? 'integer' : 'number'
      if (only === 'boolean' || only === 'string' || only === 'integer') return only
    }
  }
  if (schema.const !== undefined) {
    const t = typeof schema.const
    if (t === 'number') return Number.isInteger(schema.const) ? 'integer' : 'number'
    if (t === 'boolean' || t === 'string') return t
  }
  return 'other'
}

function coerceScalar(name: string, kind: ScalarKind, value: unknown): unknown {
  if (typeof value !== 'string') return value
  switch (kind) {
    case 'integer': {
      const trimmed = value.trim()
      if (!/^-?\d+$/.test(trimmed)) throw badRequest(`${name} is not an integer`)
      const n = Number(trimmed)
      if (!Number.isSafeInteger(n)) throw badRequest(`${name} is too large`)
      return n
    }
    case 'number': {
      const n = Number(value)
      if (value.trim() === '' || Number.isNaN(n)) throw badRequest(`${name} is not a number`)
      return n
    }
    case 'boolean': {
      if (value === 'true' || value === 'True') return true
      if (value === 'false' || value === 'False') return false
      throw badRequest(`${name} is not a boolean`)
    }
    default:
      return value
  }
}

function displayPath(instancePath: string): string {
  const parts = instancePath.split('/').filter(Boolean)
  const [head, ...rest] = parts
  return (head ?? '') + rest.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `["${p}"]`)).join('')
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  array: 'a list',
  object: 'a dict',
  null: 'null',
}

function errorFor(error: ErrorObject): ApiError {
  const path = displayPath(error.instancePath)
  switch (error.keyword) {
    case 'required': {
      const missing = String((error.params as { missingProperty: string }).missingProperty)
      return path === '' ? missingArgument(missing) : badRequest(`${path}["${missing}"] is missing`)
    }
    case 'type': {
      const expected = String((error.params as { type: string }).type).split(',')[0] ?? ''
      return badRequest(`${path} is not ${TYPE_WORDS[expected] ?? expected}`)
    }
    case 'maxLength':
      return badRequest(`${path} is too long (limit: ${(error.params as { limit: number }).limit} characters)`)
    case 'minLength':
      return badRequest(`${path} cannot be blank`)
    case 'maxItems':
      return tooManyItems(path, (error.params as { limit: number }).limit)
    case 'minimum':
    case 'exclusiveMinimum':
      // The wording of upstream's check_int_range; IDs (minimum 1) say what they must be.
      return (error.params as { limit: number }).limit === 1 && error.keyword === 'minimum'
        ? badRequest(`${path} is not a positive integer`)
        : badRequest(`${path} is too small`)
    case 'maximum':
    case 'exclusiveMaximum':
      return badRequest(`${path} is too large`)
    case 'additionalProperties':
      return badRequest(`${path} has an unexpected key '${(error.params as { additionalProperty: string }).additionalProperty}'`)
    default:
      return badRequest(`Invalid ${path}`)
  }
}

export function paramParser(params: Record<string, TSchema>): ParamParser {
  const declared = new Set<string>()
  const aliases = new Map<string, string>()
  const upstreamAliases = new Set<string>()
  const nullAbsent = new Set<string>()
  const jsonFields = new Set<string>()
  const kinds = new Map<string, ScalarKind>()
  for (const [name, schema] of Object.entries(params)) {
    const s = schemaAt(schema)
    declared.add(name)
    if (typeof s[ALIAS_MARK] === 'string') {
      aliases.set(s[ALIAS_MARK] as string, name)
      declared.add(s[ALIAS_MARK] as string)
    }
    if (typeof s[UPSTREAM_ALIAS_MARK] === 'string') {
      aliases.set(s[UPSTREAM_ALIAS_MARK] as string, name)
      upstreamAliases.add(s[UPSTREAM_ALIAS_MARK] as string)
      declared.add(s[UPSTREAM_ALIAS_MARK] as string)
    }
    if (s[NULL_ABSENT_MARK]) nullAbsent.add(name)
    if (s[JSON_MARK]) jsonFields.add(name)
    else kinds.set(name, scalarKind(s))
  }
  const idStrings = Object.entries(params)
    .filter(([name, schema]) => isIdName(name) && schemaAt(schema).type === 'string')
    .map(([name]) => name)
  const validate: ValidateFunction = ajv.compile(validatedSchema(params))

  const accepts = (name: string, options: ParseOptions = {}): boolean =>
    declared.has(name) && (options.upstreamNames !== false || !upstreamAliases.has(name))
  return {
    declared,
    accepts,
    parse(raw, options = {}) {
      const input: Record<string, unknown> = {}
      for (const key in raw) {
        if (!accepts(key, options)) continue
        const name = aliases.get(key) ?? key
        if (!Object.hasOwn(params, name)) continue
        if (name !== key && raw[name] !== undefined) throw confusingParameters(name, key)
        const value = raw[key]
        if (nullAbsent.has(name) && (value === 'null' || value === null)) continue
        input[name] = value
      }
      for (const name in input) {
        const value = input[name]
        if (jsonFields.has(name)) {
          if (typeof value === 'string') {
            try {
              input[name] = JSON.parse(value)
            } catch {
              throw invalidJson(name)
            }
          }
          inspectValue(name, input[name], true)
        } else {
          inspectValue(name, value, false)
          const kind = kinds.get(name) ?? 'other'
          if (kind === 'integer' && options.pathNames?.has(name) && typeof value === 'string' && !/^-?\d+$/.test(value)) {
            throw badRequest(`${name} is not an integer`)
          }
          input[name] = coerceScalar(name, kind, value)
        }
      }
      for (const name of idStrings) {
        // An ID parameter declared as a string (an ID or an email, such as /users/{user_id}): digits follow the ID rules.
        const value = input[name]
        if (typeof value === 'string' && /^\d+$/.test(value)) {
          if (Number(value) > INT32_MAX) throw badRequest(`${name} is too large`)
          if (Number(value) < 1) throw badRequest(`${name} is not a positive integer`)
        }
      }
      if (!validate(input)) {
        const errors = validate.errors ?? []
        const union = errors.find((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')
        // An over-long array is named as such even inside a union (principals: IDs or emails).
        const tooLong = errors.find((e) => e.keyword === 'maxItems')
        // So is a number out of range (a recipient of 2147483648 in `to`, an ID or a list of IDs).
        const outOfRange = errors.find((e) => RANGE_KEYWORDS.includes(e.keyword))
        const first = tooLong ?? outOfRange ?? union ?? errors[0]
        throw first ? errorFor(first) : badRequest('Invalid request')
      }
      return input
    },
  }
}
