import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { captureEvents } from '../support/events.js'

t.test('message events per queue', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { member, otherMember } = fx.users
  const send = () => as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'avatars', content: 'hello **world**' })

  t.test('carry the avatar URL unless the client computes external avatars itself', async (t) => {
    const [withUrl] = await captureEvents(app, otherMember, send, { register: { event_types: ['message'], client_extavatar: false } })
    t.match(withUrl?.message.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\//)
    const [withoutUrl] = await captureEvents(app, otherMember, send, { register: { event_types: ['message'], client_extavatar: true } })
    t.equal(withoutUrl?.message.avatar_url, null)
  })

  t.test('are rendered per apply_markdown', async (t) => {
    const [html] = await captureEvents(app, otherMember, send, { register: { event_types: ['message'], apply_markdown: true } })
    t.equal(html?.message.content, '<p>hello <strong>world</strong></p>')
    t.equal(html?.message.content_type, 'text/html')
    t.notOk('raw_content' in (html?.message ?? {}))
    const [markdown] = await captureEvents(app, otherMember, send, { register: { event_types: ['message'] } })
    t.equal(markdown?.message.content, 'hello **world**')
    t.equal(markdown?.message.content_type, 'text/x-markdown')
    t.same(markdown?.flags, [])
  })

  t.test('reach nobody outside the event_types asked for', async (t) => {
    const events = await captureEvents(app, otherMember, send, { register: { event_types: ['subscription'] }, expectNone: true })
    t.same(events, [])
    expectSuccess(t, await send())
  })
})
