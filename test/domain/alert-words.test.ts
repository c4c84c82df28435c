import t from 'tap'
import { AlertWordMatcher } from '../../src/domain/alert-words.js'

t.test('AlertWordMatcher', async (t) => {
  const matcher = new AlertWordMatcher([
    { userId: 1, word: 'Deploy' },
    { userId: 2, word: 'deploy' },
    { userId: 3, word: 'roll_out' },
    { userId: 4, word: 'c++' },
    { userId: 5, word: 'café' },
    { userId: 6, word: '  ' },
  ])

  t.test('matches case-insensitively at upstream word boundaries', async (t) => {
    const cases: [string, number[]][] = [
      ['deploy', [1, 2]],
      ['We DEPLOY today', [1, 2]],
      ['(deploy)', [1, 2]],
      ["'deploy', then", [1, 2]],
      ['"deploy" (a quote after a word does not count, as upstream)', []],
      ['>deploy!', [1, 2]],
      ['redeploy', []],
      ['deploys', []],
      ['deploy-ready', []],
      ['time to roll_out.', [3]],
      ['rollXout', []],
      ['learn c++ now', [4]],
      ['un café?', [5]],
      ['', []],
    ]
    for (const [content, users] of cases) t.same([...matcher.usersAlerted(content)].sort(), users, JSON.stringify(content))
  })

  t.test('only among the given users', async (t) => {
    t.same([...matcher.usersAlerted('deploy', new Set([2, 3]))], [2])
  })

  t.test('a word that occurs many times is counted once, with many owners', async (t) => {
    const many = new AlertWordMatcher(Array.from({ length: 1000 }, (_, i) => ({ userId: i, word: 'a' })))
    t.equal(many.usersAlerted('a '.repeat(5000)).size, 1000)
    t.equal(many.wordCount, 1)
  })

  t.test('blank words are ignored and no words match nothing', async (t) => {
    t.equal(matcher.wordCount, 4) // 'Deploy' and 'deploy' are one word with two owners
    t.same([...new AlertWordMatcher([]).usersAlerted('anything')], [])
  })
})
