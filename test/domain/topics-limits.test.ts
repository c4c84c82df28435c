import t from 'tap'
import {
  MAX_MESSAGE_LENGTH,
  MAX_TOPIC_LENGTH,
  normalizeMessageContent,
  truncate,
  truncateTopic,
} from '../../src/domain/limits.js'
import {
  isResolved,
  normalizeTopic,
  RESOLVED_TOPIC_PREFIX,
  resolveTopic,
  sameTopic,
  topicResolutionChange,
  unresolveTopic,
} from '../../src/domain/topics.js'

t.test('resolution', async (t) => {
  t.equal(RESOLVED_TOPIC_PREFIX, '\u2714 ')
  t.ok(isResolved('✔ done'))
  t.notOk(isResolved('✔done'))
  t.equal(resolveTopic('done'), '✔ done')
  t.equal(resolveTopic('✔ done'), '✔ done')
  t.equal(unresolveTopic('✔ ✔ done'), 'done')
  const cases: [string, string, string | null][] = [
    ['castle', '✔ castle', 'resolved'],
    ['✔ castle', 'castle', 'unresolved'],
    ['castle', '✔ moat', null],
    ['castle', 'moat', null],
    ['✔ castle', '✔ moat', null],
  ]
  for (const [from, to, change] of cases) t.equal(topicResolutionChange(from, to), change, `${from} → ${to}`)
})

t.test('topic normalization', async (t) => {
  t.equal(normalizeTopic('  hello  '), 'hello')
  // The empty topic (level 334); its display name and, where asked, "(no topic)" name it (level 370).
  t.equal(normalizeTopic('   '), '')
  t.equal(normalizeTopic(' general chat '), '')
  t.equal(normalizeTopic('(no topic)'), '(no topic)')
  t.equal(normalizeTopic(' (no topic) ', { noTopicIsEmpty: true }), '')
  t.throws(() => normalizeTopic('a\u0000b'), { message: 'Invalid character in topic, at position 2!' })
  const long = 'x'.repeat(70)
  t.equal(normalizeTopic(long), 'x'.repeat(57) + '...')
  t.equal(normalizeTopic(long).length, MAX_TOPIC_LENGTH)
  t.equal(truncateTopic('y'.repeat(60)), 'y'.repeat(60))
  t.ok(sameTopic('Castle', 'castle'))
})

t.test('message limits', async (t) => {
  t.equal(normalizeMessageContent('\n\nhi  \n'), 'hi')
  t.throws(() => normalizeMessageContent(' \n '), { message: 'Message must not be empty' })
  t.throws(() => normalizeMessageContent('a\u0000'), { message: 'Message must not contain null bytes' })
  const body = normalizeMessageContent('z'.repeat(MAX_MESSAGE_LENGTH + 5))
  t.equal(body.length, MAX_MESSAGE_LENGTH)
  t.ok(body.endsWith('\n[message truncated]'))
  // Counted in code points, not UTF-16 units.
  t.equal(truncate('😀'.repeat(5), 4, '...'), '😀...')
  t.equal(truncate('😀'.repeat(4), 4, '...'), '😀😀😀😀')
})
