// The OpenAPI 3.1 description of the API, built from the route table: every
// route's path, method, authentication and declared TypeBox parameters
// (TypeBox schemas are JSON Schema, which 3.1 uses as is). Served at
// /api/v1/openapi.json.
import { Type, type TSchema } from 'typebox'
import { ALIAS_MARK, JSON_MARK, PARSING_MARK_PREFIX } from './params.js'
import type { AuthMode, Route } from './route.js'
import { SERVICE_VERSION } from '../version.js'

type Json = Record<string, unknown>

/** A plain JSON copy of a schema, without TypeBox's hidden keys or Roost's parsing marks. */
function plain(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema, (key, value: unknown) => (key.startsWith(PARSING_MARK_PREFIX) ? undefined : value))) as Json
}

/** `/users/:user_id` → `/users/{user_id}`, and the names of its path parameters. */
export function openApiPath(url: string): { path: string; names: string[] } {
  const names: string[] = []
  const path = url.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    names.push(name)
    return `{${name}}`
  })
  return { path, names }
}

const SECURITY: Record<AuthMode, Json[]> = {
  user: [{ basicAuth: [] }],
  optional: [{ basicAuth: [] }, {}],
  none: [],
  public: [],
}

const envelope = (result: 'success' | 'error'): Json => ({
  type: 'object',
  required: ['result', 'msg'],
  properties: { result: { const: result }, msg: { type: 'string' }, ...(result === 'error' ? { code: { type: 'string' } } : {}) },
})

function operation(route: Route, key: string, pathNames: string[]): Json {
  const params = route.params ?? {}
  const required = new Set((Type.Object(params) as unknown as { required?: string[] }).required ?? [])
  const parameters: Json[] = []
  const bodyProperties: Json = {}
  const bodyRequired: string[] = []
  const inBody = route.method !== 'GET' && route.method !== 'DELETE'
  for (const [name, schema] of Object.entries(params)) {
    const isJson = Boolean((schema as unknown as Json)[JSON_MARK])
    const alias = (schema as unknown as Json)[ALIAS_MARK]
    const description = typeof alias === 'string' ? `Also accepted as \`${alias}\` (deprecated).` : undefined
    if (pathNames.includes(name)) {
      parameters.push({ name, in: 'path', required: true, schema: plain(schema) })
    } else if (inBody) {
      // JSON-valued parameters arrive as a JSON-encoded string field.
      bodyProperties[name] = {
        ...(isJson ? { type: 'string', contentMediaType: 'application/json', contentSchema: plain(schema) } : plain(schema)),
        ...(description ? { description } : {}),
      }
      if (required.has(name)) bodyRequired.push(name)
    } else {
      parameters.push({
        name,
        in: 'query',
        required: required.has(name),
        ...(isJson ? { content: { 'application/json': { schema: plain(schema) } } } : { schema: plain(schema) }),
        ...(description ? { description } : {}),
      })
    }
  }
  for (const name of pathNames) {
    if (!params[name]) parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } })
  }
  const bodySchema = { type: 'object', properties: bodyProperties, ...(bodyRequired.length > 0 ? { required: bodyRequired } : {}) }
  return {
    operationId: `${route.method.toLowerCase()}${key.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    security: SECURITY[route.auth],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(inBody && Object.keys(bodyProperties).length > 0
      ? {
          requestBody: {
            required: bodyRequired.length > 0,
            content: { 'application/x-www-form-urlencoded': { schema: bodySchema }, 'multipart/form-data': { schema: bodySchema } },
          },
        }
      : {}),
    responses: {
      '200': { description: 'Success', content: { 'application/json': { schema: envelope('success') } } },
      default: { description: 'Error', content: { 'application/json': { schema: envelope('error') } } },
    },
  }
}

/** The OpenAPI 3.1 document for a route table; API routes relative to `apiPrefix`. */
export function buildOpenApi(routes: Route[], apiPrefix: string): Json {
  const paths: Record<string, Json> = {}
  for (const route of routes) {
    const { path, names } = openApiPath(route.url)
    const key = route.outsideApi ? path : `${apiPrefix}${path}`
    const item = (paths[key] ??= {})
    item[route.method.toLowerCase()] = operation(route, key, names)
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Roost API',
      version: SERVICE_VERSION,
      description: 'The Roost team-chat API: the upstream Zulip interface with brand words renamed. Parameters may be sent in the query string or as a form body.',
    },
    paths,
    components: { securitySchemes: { basicAuth: { type: 'http', scheme: 'basic', description: 'The account email and its API key.' } } },
  }
}
