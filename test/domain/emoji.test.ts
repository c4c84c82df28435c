import t from 'tap'
import {
  allEmojiNames,
  emojiCodeForCharacters,
  emojiCodeForName,
  emojiNameForCode,
  isValidEmojiCode,
  isValidEmojiName,
  isWellFormedEmojiName,
  serverEmojiData,
} from '../../src/domain/emoji.js'

t.test('names and codes', async (t) => {
  const cases: [string, string][] = [
    ['big_smile', '1f604'],
    ['smile', '1f642'],
    ['+1', '1f44d'],
    ['thumbs_up', '1f44d'],
    ['like', '1f44d'],
    ['heart', '2764'],
    ['tada', '1f389'],
    ['working_on_it', '1f6e0'],
    ['octopus', '1f419'],
    ['hash', '0023-20e3'],
    ['flag_united_states', '1f1fa-1f1f8'],
    ['man_technologist', '1f468-200d-1f4bb'],
  ]
  for (const [name, code] of cases) t.equal(emojiCodeForName(name), code, name)
  t.equal(emojiCodeForName('no_such_emoji'), undefined)
  t.equal(emojiCodeForName('thumbsup'), undefined, 'dataset short names that upstream does not use are not names')
  t.equal(emojiNameForCode('1f604'), 'big_smile')
  t.equal(emojiNameForCode('1f44d'), '+1', 'the canonical name comes first')
  t.equal(emojiNameForCode('1F389'), 'tada')
  t.equal(emojiCodeForCharacters('❤️'), '2764')
  t.equal(emojiCodeForCharacters('❤'), '2764')
  t.equal(emojiCodeForCharacters('👍'), '1f44d')
})

t.test('the served emoji data lists every accepted name once, canonical name first', async (t) => {
  const { code_to_names } = serverEmojiData()
  t.same(code_to_names['1f44d'], ['+1', 'thumbs_up', 'like'])
  const seen = new Set<string>()
  const problems: string[] = []
  for (const [code, names] of Object.entries(code_to_names)) {
    if (!/^[0-9a-f]{4,}(-[0-9a-f]{4,})*$/.test(code)) problems.push(`bad code ${code}`)
    for (const name of names) {
      if (seen.has(name)) problems.push(`${name} names two emoji`)
      seen.add(name)
      if (emojiCodeForName(name) !== code) problems.push(`${name} does not resolve to ${code}`)
    }
  }
  t.same(problems, [])
  t.equal(seen.size, allEmojiNames().length)
  t.notOk('1f550' in code_to_names, 'clock faces other than 1f557 have no names')
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
