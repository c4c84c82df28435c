import type { LightMyRequestResponse } from 'fastify'

import type { Test } from 'tap'

export type Asserts = Pick<Test, 'equal' | 'match'>

// Test bodies are read loosely; `any` keeps assertions on nested JSON short.
export type Body = Record<string, any>

export function bodyOf(res: LightMyRequestResponse): Body {
  try {
    return JSON.parse(res.body) as Body
  } catch {
    throw new Error(`response is not JSON (status ${res.statusCode}): ${res.body.slice(0, 300)}`)
  }
}

export function expectSuccess(t: Asserts, res: LightMyRequestResponse): Body {
  const body = bodyOf(res)
  t.equal(res.statusCode, 200, `status 200 (got ${res.statusCode}: ${res.body.slice(0, 300)})`)
  t.equal(body.result, 'success')
  t.equal(body.msg, '')
  return body
}

export function expectError(t: Asserts, res: LightMyRequestResponse, expected: { code: string; status?: number; msg?: string | RegExp }): Body {
  const body = bodyOf(res)
  t.equal(res.statusCode, expected.status ?? 400, `status (body: ${res.body.slice(0, 300)})`)
  t.equal(body.result, 'error')
  t.equal(body.code, expected.code)
  if (expected.msg !== undefined) {
    if (typeof expected.msg === 'string') t.equal(body.msg, expected.msg)
    else t.match(body.msg, expected.msg)
  }
  return body
}
