import t from 'tap'
import { committedBefore, parsePgSnapshot } from '../../src/domain/pg-snapshot.js'

t.test('a transaction is in a snapshot when it finished before the snapshot was taken', async (t) => {
  const s = parsePgSnapshot('100:105:101,103')
  const cases: [string, boolean][] = [
    ['99', true], // before xmin: finished
    ['100', true], // xmin itself is not in progress here
    ['101', false], // in progress when the snapshot was taken
    ['102', true],
    ['103', false],
    ['104', true],
    ['105', false], // xmax and later: started after
    ['200', false],
  ]
  for (const [xid, expected] of cases) t.equal(committedBefore(s, xid), expected, `xid ${xid}`)
})

t.test('an empty in-progress list parses', async (t) => {
  const s = parsePgSnapshot('7:7:')
  t.equal(committedBefore(s, '6'), true)
  t.equal(committedBefore(s, '7'), false)
})

t.test('garbage is rejected', async (t) => {
  t.throws(() => parsePgSnapshot('x'))
})
