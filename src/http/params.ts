// Parameter declarations and the one parsing step that merges query string,
// form body and path into a validated `input` (STYLE.md "Parameters").
import { Type, type TSchema, type TOptional } from 'typebox'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { ApiError, badRequest, confusingParameters, invalidJson, missingArgument } from '../errors.js'

const JSON_MARK = 'x-roost-json'
const ALIAS_MARK = 'x-roost-alias'

/** An array or object parameter: arrives JSON-encoded (spec §Conventions). */
export function json<T extends TSchema>(schema: T): T {
  return { ...schema, [JSON_MARK]: true }
}

/** A deprecated name still accepted for the parameter; sending both is an error. */
export function alias<T extends TSchema>(schema: T, name: string): T {
  return { ...schema, [ALIAS_MARK]: name }
}

export function optional<T extends TSchema>(schema: T, options: { default?: unknown } = {}): TOptional<T> {
  // typebox 1.x types Type.Optional conditionally; the result is always optional.
  const withDefault = options.default === undefined ? schema : { ...schema, default: options.default }
  return Type.Optional(withDefault as T) as TOptional<T>
}

type Raw = Record<string, unknown>

export interface ParamParser {
  declared: Set<string>
  parse(raw: Raw): Record<string, unknown>
}

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
    case 'additionalProperties':
      return badRequest(`${path} has an unexpected key '${(error.params as { additionalProperty: string }).additionalProperty}'`)
    default:
      return badRequest(`Invalid ${path}`)
  }
}

export function paramParser(params: Record<string, TSchema>): ParamParser {
  const declared = new Set<string>()
  const aliases = new Map<string, string>()
  const jsonFields = new Set<string>()
  const kinds = new Map<string, ScalarKind>()
  for (const [name, schema] of Object.entries(params)) {
    const s = schemaAt(schema)
    declared.add(name)
    if (typeof s[ALIAS_MARK] === 'string') {
      aliases.set(s[ALIAS_MARK] as string, name)
      declared.add(s[ALIAS_MARK] as string)
    }
    if (s[JSON_MARK]) jsonFields.add(name)
    else kinds.set(name, scalarKind(s))
  }
  const validate: ValidateFunction = ajv.compile(Type.Object(params) as unknown as object)

  return {
    declared,
    parse(raw) {
      const input: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(raw)) {
        const name = aliases.get(key) ?? key
        if (!params[name]) continue
        if (name !== key && raw[name] !== undefined) throw confusingParameters(name, key)
        input[name] = value
      }
      for (const [name, value] of Object.entries(input)) {
        if (jsonFields.has(name)) {
          if (typeof value === 'string') {
            try {
              input[name] = JSON.parse(value)
            } catch {
              throw invalidJson(name)
            }
          }
        } else {
          input[name] = coerceScalar(name, kinds.get(name) ?? 'other', value)
        }
      }
      if (!validate(input)) {
        const errors = validate.errors ?? []
        const union = errors.find((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')
        const first = union ?? errors[0]
        throw first ? errorFor(first) : badRequest('Invalid request')
      }
      return input
    },
  }
}
