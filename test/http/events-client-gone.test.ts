// A long-poll whose client goes away ends at once (the route's closeSignal):
// the node stops holding it, its queue stays, and the queue's next poll gets
// the events that arrive after. A poll answered normally is not taken for
// one that was abandoned.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as, basicAuth } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { eventually } from '../support/eventually.js'

t.test('GET /events: the client goes away while its poll is held', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  /** Waits up to 10 s for the node's count of held polls to be `n`. */
  const held = async (n: number, what: string) => t.equal(await eventually(what, () => services.events.heldPolls, { until: (count) => count === n }), n, what)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const { member, otherMember } = fx.users
  const headers = { authorization: basicAuth(member.deliveryEmail, member.apiKey), host: fx.host }
  const { queue_id, last_event_id } = expectSuccess(t, await as(app, member).post('/register', { event_types: JSON.stringify(['message']) }))

  /** GET /events for the queue over a real connection (fetch; aborting it closes the connection). */
  const poll = (signal?: AbortSignal) =>
    fetch(`http://127.0.0.1:${port}/api/v1/events?queue_id=${encodeURIComponent(queue_id)}&last_event_id=${last_event_id}`, { headers, signal })

  const hangUp = new AbortController()
  const abandoned = poll(hangUp.signal).catch(() => undefined)
  await held(1, 'the poll is held')
  hangUp.abort()
  await abandoned
  await held(0, 'the abandoned poll is released')

  const next = poll()
  await held(1, 'the next poll is held')
  expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'direct', to: JSON.stringify([member.id]), content: 'after the hang-up' }))
  const body = (await (await next).json()) as { result: string; events: { type: string; message: { content: string } }[] }
  t.equal(body.result, 'success')
  t.same(
    body.events.map((e) => [e.type, e.message.content]),
    [['message', 'after the hang-up']],
    'the queue stayed and its next poll got the new event',
  )
  await held(0, 'the answered poll is released')
})
