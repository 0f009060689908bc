import { expect, test } from 'vitest'
import { expandFragments } from '../../scripts/gen-migrations.js'

const fragments = new Map([
  ['due', ':ROW.run_at <= now()'],
  ['walk', 'SELECT :ROW.id FROM jobs j WHERE :DUE(j) LIMIT :ROW.room'],
])

test('a fragment is placed with :ROW made the alias, and may place another', () => {
  expect(expandFragments('FROM q CROSS JOIN LATERAL :WALK(q) p', fragments)).toBe(
    'FROM q CROSS JOIN LATERAL (SELECT q.id FROM jobs j WHERE (j.run_at <= now()) LIMIT q.room) p',
  )
})

test('an unknown fragment and a fragment that places itself are refused, naming the file', () => {
  expect(() => expandFragments('WHERE :NOPE(j)', fragments, 'claim.sql')).toThrow(
    'claim.sql uses :NOPE(j), but migrations/fragments/nope.sql does not exist',
  )
  expect(() => expandFragments('WHERE :LOOP(j)', new Map([['loop', 'x AND :LOOP(j)']]), 'claim.sql')).toThrow(
    'claim.sql: fragments placed more than 4 deep, at :LOOP(j)',
  )
})
