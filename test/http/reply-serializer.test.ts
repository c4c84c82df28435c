import t from 'tap'
import { serializeReply } from '../../src/http/reply-serializer.js'
import { RawJson, rawObject } from '../../src/present/raw-json.js'

const text = (body: string | Buffer) => (typeof body === 'string' ? body : body.toString('utf8'))
const member = (s: string) => Buffer.from(s)

t.test('answers without pre-serialized fields are JSON.stringify', async (t) => {
  for (const payload of [{ result: 'success', msg: '', n: 1, at: new Date(0), gone: undefined }, [1, 2], null, 'text', { nested: { a: [1] } }]) {
    t.equal(serializeReply(payload), JSON.stringify(payload))
  }
})

t.test('a top-level RawJson field is copied in as its bytes, in member order, other fields as JSON.stringify writes them', async (t) => {
  const presences = rawObject([member('"a@example.com":{"x":1}'), member('"b\\"ç@example.com":{"y":[2]}')])
  const body = serializeReply({ result: 'success', msg: '', presences, skipped: undefined, fn: () => 1, at: new Date(0), last: 7 })
  t.ok(Buffer.isBuffer(body))
  t.equal(text(body), '{"result":"success","msg":"","presences":{"a@example.com":{"x":1},"b\\"ç@example.com":{"y":[2]}},"at":"1970-01-01T00:00:00.000Z","last":7}')
  t.same(JSON.parse(text(body)).presences, { 'a@example.com': { x: 1 }, 'b"ç@example.com': { y: [2] } })
  t.equal(text(serializeReply({ presences: rawObject([]), skipped: undefined })), '{"presences":{}}', 'no comma before or after a member left out')
  t.equal(text(serializeReply({ skipped: undefined, presences: rawObject([]) })), '{"presences":{}}')
})

t.test('a RawJson anywhere else serializes to the same value through toJSON', async (t) => {
  const raw = new RawJson([member('{"k":[1,'), member('{"v":null}]}')])
  t.equal(serializeReply({ deep: { raw } }), '{"deep":{"raw":{"k":[1,{"v":null}]}}}')
  t.equal(JSON.stringify([raw]), '[{"k":[1,{"v":null}]}]')
  t.equal(raw.byteLength, 20)
})
