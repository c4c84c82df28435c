import t from 'tap'
import { extractMentionCandidates, hashEncode, mayMentionTopicWildcard, renderMarkdown, type RenderContext } from '../../src/domain/markdown.js'

const hamlet = { id: 10, fullName: 'King Hamlet' }
const iago = { id: 5, fullName: 'Iago' }
const ctx: RenderContext = {
  usersByName: new Map([
    ['king hamlet', [hamlet]],
    ['iago', [iago]],
  ]),
  usersById: new Map([
    [10, hamlet],
    [5, iago],
  ]),
  groupsByName: new Map([
    ['support', { id: 17, name: 'support' }],
    ['role:administrators', { id: 4, name: 'role:administrators', systemDisplayName: 'Administrators' }],
  ]),
  streamsByName: new Map([['general chat', { id: 3, name: 'general chat' }]]),
  realmEmoji: new Map([['green_tick', { id: '7', name: 'green_tick', sourceUrl: '/user_avatars/2/emoji/images/7.png' }]]),
  realmUrl: 'https://chat.example.com',
}
const html = (content: string): string => renderMarkdown(content, ctx).html
const p = (inner: string): string => `<p>${inner}</p>`

t.test('mention and link HTML', async (t) => {
  const cases: [string, string][] = [
    ['@**King Hamlet**', '<span class="user-mention" data-user-id="10">@King Hamlet</span>'],
    ['@**king hamlet**', '<span class="user-mention" data-user-id="10">@King Hamlet</span>'],
    ['@**King Hamlet|10**', '<span class="user-mention" data-user-id="10">@King Hamlet</span>'],
    ['@**|5**', '<span class="user-mention" data-user-id="5">@Iago</span>'],
    ['@_**Iago**', '<span class="user-mention silent" data-user-id="5">Iago</span>'],
    ['@**all**', '<span class="user-mention channel-wildcard-mention" data-user-id="*">@all</span>'],
    ['@**everyone**', '<span class="user-mention channel-wildcard-mention" data-user-id="*">@everyone</span>'],
    ['@**channel**', '<span class="user-mention channel-wildcard-mention" data-user-id="*">@channel</span>'],
    ['@**stream**', '<span class="user-mention channel-wildcard-mention" data-user-id="*">@stream</span>'],
    ['@_**all**', '<span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span>'],
    ['@**topic**', '<span class="topic-mention">@topic</span>'],
    ['@*support*', '<span class="user-group-mention" data-user-group-id="17">@support</span>'],
    ['@_*support*', '<span class="user-group-mention silent" data-user-group-id="17">support</span>'],
    // Level 333: system groups are mentioned only silently, by their display name.
    ['@_*role:administrators*', '<span class="user-group-mention silent" data-user-group-id="4">Administrators</span>'],
    ['@*role:administrators*', '@<em>role:administrators</em>'],
    ['#**general chat**', '<a class="stream" data-stream-id="3" href="/#narrow/channel/3-general-chat">#general chat</a>'],
    [
      '#**general chat>my topic**',
      '<a class="stream-topic" data-stream-id="3" href="/#narrow/channel/3-general-chat/topic/my.20topic">#general chat &gt; my topic</a>',
    ],
    [':smile:', '<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span>'],
    ['😄', '<span aria-label="big smile" class="emoji emoji-1f604" role="img" title="big smile">:big_smile:</span>'],
    [':thumbs_up:', '<span aria-label="thumbs up" class="emoji emoji-1f44d" role="img" title="thumbs up">:thumbs_up:</span>'],
    [':+1:', '<span aria-label="+1" class="emoji emoji-1f44d" role="img" title="+1">:+1:</span>'],
    [':green_tick:', '<img alt=":green_tick:" class="emoji" src="/user_avatars/2/emoji/images/7.png" title="green tick">'],
    [':zulip:', '<img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip">'],
    [':no_such_emoji:', ':no_such_emoji:'],
    ['@**Nobody**', '@<strong>Nobody</strong>'],
    ['@**Iago|10**', '@<strong>Iago|10</strong>'],
    ['x@**Iago**', 'x@<strong>Iago</strong>'],
    ['#**nowhere**', '#<strong>nowhere</strong>'],
    ['https://example.com', '<a href="https://example.com" target="_blank" rel="noopener noreferrer">https://example.com</a>'],
    ['[x](https://chat.example.com/user_uploads/1/a.txt)', '<a href="/user_uploads/1/a.txt" target="_blank" rel="noopener noreferrer">x</a>'],
    ['a\nb', 'a<br>\nb'],
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['`@**Iago**`', '<code>@**Iago**</code>'],
  ]
  for (const [input, expected] of cases) t.equal(html(input), p(expected), input)
})

t.test('code blocks', async (t) => {
  t.equal(
    html('```\n<b>@**Iago**</b>\n```'),
    '<div class="codehilite"><pre><span></span><code>&lt;b&gt;@**Iago**&lt;/b&gt;\n</code></pre></div>',
  )
  t.equal(
    html('```py\nx = 1  \n```'),
    '<div class="codehilite" data-code-language="py"><pre><span></span><code>x = 1\n</code></pre></div>',
  )
  t.equal(html('    indented'), '<div class="codehilite"><pre><span></span><code>indented\n</code></pre></div>')
  t.equal(
    html('```quote\nhi @**Iago**\n```'),
    '<blockquote>\n<p>hi <span class="user-mention" data-user-id="5">@Iago</span></p>\n</blockquote>',
  )
})

t.test('mention bookkeeping', async (t) => {
  const r = renderMarkdown('@**King Hamlet** @_**Iago** @*support* @**all** @**topic** `@**Iago**`', ctx)
  t.same(r.mentionedUserIds, [10])
  t.same(r.silentlyMentionedUserIds, [5])
  t.same(r.mentionedGroupIds, [17])
  t.equal(r.streamWildcard, true)
  t.equal(r.topicWildcard, true)

  const silent = renderMarkdown('@_**all** @_**topic** @_*support*', ctx)
  t.equal(silent.streamWildcard, false)
  t.equal(silent.topicWildcard, false)
  t.same(silent.mentionedGroupIds, [])

  const code = renderMarkdown('```\n@**Iago** @**all**\n```', ctx)
  t.same(code.mentionedUserIds, [])
  t.equal(code.streamWildcard, false)
})

t.test('links, images, attachments', async (t) => {
  const r = renderMarkdown('see [a](/user_uploads/2/ab/pic.PNG) and [b](/user_uploads/2/cd/doc.pdf?x=1) [a](/user_uploads/2/ab/pic.PNG)', ctx)
  t.equal(r.hasLink, true)
  t.equal(r.hasImage, true)
  t.equal(r.hasAttachment, true)
  t.same(r.linkedUploadPaths, ['2/ab/pic.PNG', '2/cd/doc.pdf'])

  const plain = renderMarkdown('no links here', ctx)
  t.same([plain.hasLink, plain.hasImage, plain.hasAttachment], [false, false, false])

  const ext = renderMarkdown('https://example.com/page', ctx)
  t.same([ext.hasLink, ext.hasImage, ext.hasAttachment], [true, false, false])

  t.notMatch(html('[x](javascript:alert(1))'), /<a /, 'javascript: links are not links')
})

t.test('extractMentionCandidates', async (t) => {
  t.same(extractMentionCandidates('@**Ann** @_**Bob|3** @**|4** @**all** @*grp* @_*g2* #**s>t** #**u** :tada: hi'), {
    userNames: ['Ann', 'Bob'],
    userIds: [3, 4],
    groupNames: ['grp', 'g2'],
    streamNames: ['s', 's>t', 'u'],
    emojiNames: ['tada'],
  })
})

t.test('hashEncode', async (t) => {
  t.equal(hashEncode('my topic.x'), 'my.20topic.2Ex')
  t.equal(hashEncode('ünï'), '.C3.BCn.C3.AF')
})

t.test('mayMentionTopicWildcard is true whenever rendering can mention the topic', async (t) => {
  const cases = ['hi', '@**topic**', 'see @**topic** now', '`@**topic**`', '@_**topic**', '@**Topic**', '@**all**', 'topic', '> @**topic**']
  for (const content of cases) {
    const rendered = renderMarkdown(content, ctx).topicWildcard
    if (rendered) t.ok(mayMentionTopicWildcard(content), content)
  }
  t.equal(mayMentionTopicWildcard('no wildcard @**all** here'), false)
  t.equal(mayMentionTopicWildcard('@_**topic**'), false, 'a silent one sets no flag')
  t.equal(mayMentionTopicWildcard('@**topic**'), true)
})
