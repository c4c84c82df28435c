// GET /api/v1/openapi.json: the OpenAPI 3.1 description built from the route
// table. Every route is in it (templated path, method, declared parameters
// with their schemas, Basic auth where required), it needs no credentials,
// and it validates as OpenAPI 3.1.
import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Type } from 'typebox'
import { buildTestApp } from '../support/app.js'
import { bodyOf, type Body } from '../support/expect.js'
import { allRoutes } from '../../src/http/routes/index.js'
import { openApiPath } from '../../src/http/openapi.js'
import { JSON_MARK } from '../../src/http/params.js'

const strip = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (key, v: unknown) => (key.startsWith('x-roost-') ? undefined : v)))

t.test('GET /api/v1/openapi.json describes every route and validates as OpenAPI 3.1', async (t) => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })
  t.equal(res.statusCode, 200, 'served without credentials')
  t.match(res.headers['content-type'], /^application\/json/)
  const doc = bodyOf(res)
  t.equal(doc.openapi, '3.1.0')
  t.same(doc.components.securitySchemes.basicAuth, { type: 'http', scheme: 'basic', description: 'The account email and its API key.' })

  const validation = await new Validator().validate(structuredClone(doc))
  t.same(validation.errors, undefined, 'no schema errors')
  t.equal(validation.valid, true, 'valid OpenAPI 3.1')

  t.equal(openApiPath('/users/:user_id/subscriptions/:stream_id').path, '/users/{user_id}/subscriptions/{stream_id}')
  const operationIds = new Set<string>()
  let operations = 0
  for (const route of allRoutes) {
    const { path, names } = openApiPath(route.url)
    const key = route.outsideApi ? path : `/api/v1${path}`
    const op: Body | undefined = doc.paths[key]?.[route.method.toLowerCase()]
    if (!t.ok(op, `${route.method} ${key} is described`) || !op) continue
    operations++
    t.notOk(operationIds.has(op.operationId), `${op.operationId} is unique`)
    operationIds.add(op.operationId)
    t.same(op.security, route.auth === 'user' ? [{ basicAuth: [] }] : route.auth === 'optional' ? [{ basicAuth: [] }, {}] : [], `${route.method} ${key} security`)
    const params = route.params ?? {}
    const required = new Set((Type.Object(params) as unknown as { required?: string[] }).required ?? [])
    const parameters: Body[] = op.parameters ?? []
    const body: Body | undefined = op.requestBody?.content['application/x-www-form-urlencoded'].schema
    for (const name of names) {
      const p = parameters.find((x) => x.name === name && x.in === 'path')
      t.ok(p?.required, `${key}: path parameter ${name}`)
    }
    for (const [name, schema] of Object.entries(params)) {
      if (names.includes(name)) {
        t.same(parameters.find((x) => x.name === name)?.schema, strip(schema), `${key}: ${name} schema`)
        continue
      }
      const isJson = Boolean((schema as unknown as Body)[JSON_MARK])
      if (route.method === 'GET' || route.method === 'DELETE') {
        const p = parameters.find((x) => x.name === name && x.in === 'query')
        if (!t.ok(p, `${route.method} ${key}: query parameter ${name}`) || !p) continue
        t.equal(p.required, required.has(name), `${key}: ${name} required`)
        t.same(isJson ? p.content['application/json'].schema : p.schema, strip(schema), `${key}: ${name} schema`)
      } else {
        const property = body?.properties[name]
        if (!t.ok(property, `${route.method} ${key}: body field ${name}`)) continue
        t.match(isJson ? property.contentSchema : property, strip(schema), `${key}: ${name} schema`)
        t.equal((body?.required ?? []).includes(name), required.has(name), `${key}: ${name} required`)
      }
    }
  }
  const described = Object.values(doc.paths as Record<string, Body>).reduce((n, item) => n + Object.keys(item).length, 0)
  t.equal(described, operations, 'nothing but the route table is described')
  t.ok(operations > 100, `${operations} operations`)

  // A concrete route, in full.
  const getUser = doc.paths['/api/v1/users/{user_id}'].get
  t.same(getUser.parameters.find((p: Body) => p.name === 'user_id'), { name: 'user_id', in: 'path', required: true, schema: { type: 'string' } })
  t.same(getUser.security, [{ basicAuth: [] }])
})

t.test('the validator rejects a malformed document', async (t) => {
  const result = await new Validator().validate({ openapi: '3.1.0', info: { title: 'x' }, paths: { '/a': { get: { parameters: [{ name: 'q', in: 'nowhere' }] } } } })
  t.equal(result.valid, false)
})
