// GET /messages is bounded in bytes (issue 33, item 2): a channel full of
// large messages is read in bulk in answers of at most
// MAX_MESSAGES_RESPONSE_BYTES of messages, cut on the side farthest from the
// anchor with found_oldest / found_newest false there, so a client paging as
// the mobile app does (anchor = its oldest message, include_anchor false,
// until found_oldest) reads all of it.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import { MAX_MESSAGES_RESPONSE_BYTES, MAX_RENDERED_CONTENT_BYTES } from '../../src/domain/limits.js'
import { boundWindow } from '../../src/queries/messages.js'

/** Content rendering to just under the cap (an emoji character renders to about 100 bytes). */
const LARGE = '⁉'.repeat(2300)
/** Enough large messages for several answers. */
const COUNT = 40
/** The envelope around the messages: result, msg, anchor and the found_* fields. */
const ENVELOPE_BYTES = 512

t.test('GET /messages over a channel of large messages', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { member, otherMember } = fx.users
  const general = fx.streams.general
  const narrow = [
    { operator: 'channel', operand: general.id },
    { operator: 'topic', operand: 'large' },
  ]
  const sent: number[] = []
  for (let i = 0; i < COUNT; i++) {
    const res = await as(app, i % 2 === 0 ? member : otherMember).post('/messages', { type: 'stream', to: general.id, topic: 'large', content: `${i} ${LARGE}` })
    sent.push(expectSuccess(t, res).id as number)
  }
  const read = async (params: Record<string, unknown>) => {
    const res = await as(app, member).get('/messages', { narrow, ...params })
    const body = expectSuccess(t, res)
    t.ok(Buffer.byteLength(res.body) <= MAX_MESSAGES_RESPONSE_BYTES + ENVELOPE_BYTES, `answer of ${Buffer.byteLength(res.body)} bytes within the budget`)
    return body
  }
  const ids = (body: Body): number[] => body.messages.map((m: Body) => m.id)

  t.test('the rendered messages are as large as the test means', async (t) => {
    const body = await read({ anchor: sent[0], num_before: 0, num_after: 0 })
    const size = Buffer.byteLength(body.messages[0].content)
    t.ok(size > MAX_RENDERED_CONTENT_BYTES * 0.9 && size <= MAX_RENDERED_CONTENT_BYTES, `${size} bytes`)
    t.ok(size * COUNT > MAX_MESSAGES_RESPONSE_BYTES, 'the channel holds more than one answer')
  })

  t.test('the newest messages, cut at the old end: found_oldest is false', async (t) => {
    const body = await read({ anchor: 'newest', num_before: 1000, num_after: 0 })
    const got = ids(body)
    t.ok(got.length > 0 && got.length < COUNT, `${got.length} messages`)
    t.same(got, sent.slice(-got.length), 'the newest, in order')
    t.equal(body.found_oldest, false)
    t.equal(body.found_newest, true)
    t.equal(body.found_anchor, false)
    t.equal(body.history_limited, false)
  })

  /** Pages from the newest message back, as the mobile app does; the ids seen and the number of pages. */
  const pageBackwards = async (extra: Record<string, unknown> = {}) => {
    let body = await read({ anchor: 'newest', num_before: 1000, num_after: 0, ...extra })
    const seen = ids(body)
    let pages = 1
    while (!body.found_oldest) {
      t.ok(pages <= COUNT, 'each page brings at least one message')
      if (pages > COUNT) break
      body = await read({ anchor: seen[0], include_anchor: false, num_before: 1000, num_after: 0, ...extra })
      const got = ids(body)
      t.ok(got.length > 0, 'a page that is not the last has messages')
      seen.unshift(...got)
      pages++
    }
    return { seen, pages }
  }

  t.test('paging backwards as the mobile app does reads every message once', async (t) => {
    const { seen, pages } = await pageBackwards()
    t.same(seen, sent)
    t.ok(pages >= 2, `${pages} pages`)
  })

  t.test('paging forwards from the oldest likewise, found_newest false until the end', async (t) => {
    let body = await read({ anchor: 'oldest', num_before: 0, num_after: 1000 })
    t.equal(body.found_oldest, true)
    const seen = ids(body)
    let pages = 1
    while (!body.found_newest) {
      if (pages > COUNT) break
      body = await read({ anchor: seen[seen.length - 1], include_anchor: false, num_before: 0, num_after: 1000 })
      seen.push(...ids(body))
      pages++
    }
    t.same(seen, sent)
    t.ok(pages >= 2, `${pages} pages`)
  })

  t.test('around an anchor in the middle: the anchor and its nearest neighbours on both sides', async (t) => {
    const middle = sent[COUNT / 2] as number
    const body = await read({ anchor: middle, num_before: 1000, num_after: 1000 })
    const got = ids(body)
    t.equal(body.found_anchor, true)
    t.equal(body.found_oldest, false)
    t.equal(body.found_newest, false)
    const at = got.indexOf(middle)
    t.ok(at > 0 && at < got.length - 1, 'messages on both sides of the anchor')
    t.ok(Math.abs(at - (got.length - 1 - at)) <= 1, 'as many on each side, give or take one')
    t.same(got, sent.slice(sent.indexOf(got[0] as number), sent.indexOf(got[0] as number) + got.length), 'contiguous')
  })

  t.test('the budget counts what is sent: the Markdown sources fit in one answer', async (t) => {
    const body = await read({ anchor: 'newest', num_before: 1000, num_after: 0, apply_markdown: false })
    t.same(ids(body), sent)
    t.equal(body.found_oldest, true)
  })

  t.test('GET /messages/matches_narrow refuses an answer past the budget, and answers within it', async (t) => {
    const res = await as(app, member).get('/messages/matches_narrow', { msg_ids: sent, narrow })
    expectError(t, res, { code: 'BAD_REQUEST', status: 400, msg: `The matching messages exceed ${MAX_MESSAGES_RESPONSE_BYTES} bytes; ask about fewer messages in msg_ids` })
    const few = expectSuccess(t, await as(app, member).get('/messages/matches_narrow', { msg_ids: sent.slice(0, 10), narrow })).messages
    t.same(Object.keys(few).map(Number), sent.slice(0, 10))
  })

  t.test('a search narrow counts match_content too, and still pages through everything', async (t) => {
    const searched = await pageBackwards({ narrow: [...narrow, { operator: 'search', operand: '⁉' }] })
    t.same(searched.seen, sent)
    t.ok(searched.pages > (await pageBackwards()).pages, 'more pages: each message weighs twice')
  })
})

t.test('boundWindow takes messages from the anchor outwards, each side stopping at its first that overruns', async (t) => {
  const size = new Map<string, number>([
    ['a', 5],
    ['b1', 3],
    ['b2', 3],
    ['b3', 1],
    ['f1', 2],
    ['f2', 9],
    ['f3', 1],
  ])
  const run = (budget: number, anchor: string[] = ['a']) => {
    const r = boundWindow({ anchor, before: ['b1', 'b2', 'b3'], after: ['f1', 'f2', 'f3'] }, (k) => size.get(k) as number, budget)
    return { kept: [...r.kept].sort(), cutBefore: r.cutBefore, cutAfter: r.cutAfter }
  }
  t.same(run(100), { kept: ['a', 'b1', 'b2', 'b3', 'f1', 'f2', 'f3'], cutBefore: false, cutAfter: false })
  // a 5, f1 2, b1 3, then f2 (9) overruns 14: the after side stops there; b2 3 and b3 1 still fit.
  t.same(run(14), { kept: ['a', 'b1', 'b2', 'b3', 'f1'], cutBefore: false, cutAfter: true })
  t.same(run(4), { kept: ['a'], cutBefore: true, cutAfter: true }, 'the nearest message is taken even past the budget')
  t.same(run(4, []), { kept: ['f1'], cutBefore: true, cutAfter: true }, 'without the anchor: the nearest after first')
})
