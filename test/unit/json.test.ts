import { describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/index.js'
import { assertStorable, jsonPath, jsonProblem, MAX_JSON_DEPTH } from '../../src/json.js'

const nest = (depth: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { k: value }
  return value
}

describe('jsonProblem', () => {
  it('accepts what jsonb stores', () => {
    for (const value of [
      null,
      true,
      0,
      -1.5,
      'text',
      '😀',
      [],
      {},
      { a: [1, { b: 'c' }] },
      new Date(0),
      undefined,
    ]) {
      expect(jsonProblem(value)).toBeNull()
    }
  })

  it.each<[string, unknown, (string | number)[], RegExp]>([
    ['a NUL in a string', { a: ['x\u0000y'] }, ['a', 0], /NUL character/],
    ['a NUL in a key', { 'a\u0000': 1 }, ['a\u0000'], /the key contains a NUL/],
    ['a lone high surrogate', ['\ud800'], [0], /lone UTF-16 surrogate/],
    ['a lone low surrogate', { s: 'a\udc00' }, ['s'], /lone UTF-16 surrogate/],
    ['NaN', { n: Number.NaN }, ['n'], /is NaN: JSON numbers are finite/],
    ['Infinity', [Number.POSITIVE_INFINITY], [0], /is Infinity/],
    ['a bigint', { b: 1n }, ['b'], /is a bigint/],
    ['a function', { f: () => 1 }, ['f'], /is a function/],
    ['a symbol', [Symbol('s')], [0], /is a symbol/],
  ])('finds %s and where it is', (_, value, path, message) => {
    const problem = jsonProblem(value)
    expect(problem?.path).toEqual(path)
    expect(problem?.message).toMatch(message)
  })

  it('accepts a surrogate pair', () => {
    expect(jsonProblem({ 'key😀': '😀' })).toBeNull()
  })

  it('walks what toJSON returns, as JSON.stringify does', () => {
    expect(jsonProblem({ at: { toJSON: () => 'fine' } })).toBeNull()
    expect(jsonProblem({ at: { toJSON: () => ({ bad: Number.NaN }) } })?.path).toEqual(['at', 'bad'])
  })

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels, and stops walking there`, () => {
    expect(jsonProblem(nest(MAX_JSON_DEPTH))).toBeNull()
    expect(jsonProblem(nest(MAX_JSON_DEPTH + 1))?.message).toMatch(/deeper than 100 levels/)
    expect(jsonProblem(nest(3), 2)?.message).toMatch(/deeper than 2 levels/)
    // Far deeper than the call stack allows: the walk stops at the limit instead of crashing.
    expect(jsonProblem(nest(200_000))?.message).toMatch(/deeper than 100 levels/)
  })
})

describe('jsonPath', () => {
  it('writes JavaScript accessors, quoting what is not an identifier', () => {
    expect(jsonPath('input', ['a', 'b', 3])).toBe('input.a.b[3]')
    expect(jsonPath('input', ['odd key', '$ok'])).toBe('input["odd key"].$ok')
    expect(jsonPath('', ['a', 0])).toBe('a[0]')
    expect(jsonPath('', [])).toBe('')
    expect(jsonPath('p', ['k'.repeat(50)])).toBe(`p.${'k'.repeat(50)}`)
    expect(jsonPath('p', [`-${'k'.repeat(50)}`])).toBe(`p["-${'k'.repeat(39)}…"]`)
  })
})

describe('assertStorable', () => {
  it('throws a ValidationError naming the culprit and its path', () => {
    let error: unknown
    try {
      assertStorable({ a: { b: [0, Number.NaN] } }, 'input', 'Job "x" input cannot be stored', ['input'])
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ValidationError)
    expect(error).toMatchObject({
      code: 'INVALID_INPUT',
      message: 'Job "x" input cannot be stored at input.a.b[1]: is NaN: JSON numbers are finite.',
      issues: [{ path: ['input', 'a', 'b', 1], code: 'unstorable' }],
    })
  })

  it('says "(root)" for a problem at the root, and passes storable values', () => {
    expect(() => assertStorable(Number.NaN, '', 'Bad')).toThrow('Bad at (root): is NaN')
    expect(() => assertStorable({ ok: true }, 'input', 'Bad')).not.toThrow()
  })
})
