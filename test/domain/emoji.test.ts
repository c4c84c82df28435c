import t from 'tap'
import {
  emojiCodeForCharacters,
  emojiCodeForName,
  emojiNameForCode,
  isValidEmojiCode,
  isValidEmojiName,
  isWellFormedEmojiName,
} from '../../src/domain/emoji.js'

t.test('names and codes', async (t) => {
  const cases: [string, string][] = [
    ['smile', '1f604'],
    ['+1', '1f44d'],
    ['thumbsup', '1f44d'],
    ['heart', '2764'],
    ['tada', '1f389'],
    ['hash', '0023-20e3'],
    ['flag-us', '1f1fa-1f1f8'],
  ]
  for (const [name, code] of cases) t.equal(emojiCodeForName(name), code, name)
  t.equal(emojiCodeForName('no_such_emoji'), undefined)
  t.equal(emojiNameForCode('1f604'), 'smile')
  t.equal(emojiNameForCode('1F389'), 'tada')
  t.equal(emojiCodeForCharacters('❤️'), '2764')
  t.equal(emojiCodeForCharacters('❤'), '2764')
})

t.test('validity', async (t) => {
  t.ok(isValidEmojiName('octopus'))
  t.ok(isValidEmojiName('zulip'))
  t.notOk(isValidEmojiName('definitely_not'))
  t.ok(isValidEmojiCode('1f419', 'unicode_emoji'))
  t.notOk(isValidEmojiCode('zzzz', 'unicode_emoji'))
  t.ok(isValidEmojiCode('zulip', 'service_extra_emoji'))
  t.ok(isValidEmojiCode('7', 'realm_emoji', new Set(['7'])))
  t.notOk(isValidEmojiCode('8', 'realm_emoji', new Set(['7'])))
  t.ok(isWellFormedEmojiName('party_parrot-2'))
  t.notOk(isWellFormedEmojiName('Party'))
  t.notOk(isWellFormedEmojiName('trailing_'))
})
