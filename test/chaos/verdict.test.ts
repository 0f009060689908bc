/**
 * The fault suite's verdict on made-up records: it attributes a re-run to the fault that
 * caused it and reports what no fault explains, so a chaos run that passes has been judged by
 * something that can fail.
 */
import { describe, expect, test } from 'vitest'
import { analyse, type DbFacts, type Fault, parseRunLog } from './verdict.js'

const none = {
  jobs: 0,
  leased: 0,
  blocked: 0,
  invocations: 0,
  uniqueLocks: 0,
  semaphoreSlots: 0,
  queueLeases: 0,
}

/** Two plain jobs (#0 id 1, #1 id 2), both archived as completed. */
function facts(over: Partial<DbFacts> = {}): DbFacts {
  return {
    jobs: [],
    archive: [
      { id: '1', name: 'chaos-plain', status: 'completed', attempts: 2, n: 0 },
      { id: '2', name: 'chaos-plain', status: 'completed', attempts: 1, n: 1 },
    ],
    dead: [],
    effects: [],
    delivered: [],
    stepEffects: [],
    steps: [],
    leftovers: none,
    ...over,
  }
}

/**
 * Worker 100 starts job 1 at t=1000 and never ends it; worker 200 runs job 1 again at t=5000
 * (after the first lease, which lasts until 4000) and job 2 once.
 */
const killed = parseRunLog(['P 100 0 900', 'D 1000 4000', 'S 1 1 1000 2000', ''].join('\n'))
const second = parseRunLog(
  [
    'P 200 1 4900',
    'D 5000 8000',
    'S 1 2 5000 6000',
    'E 1 2 5010 ok',
    'S 2 1 5020 6020',
    'E 2 1 5030 ok',
    'R 5040 2 2 0 0 0 empty',
  ].join('\n'),
)
const judge = (faults: Fault[], logs = [killed, second], dbFacts = facts()) =>
  analyse({
    total: 2,
    kinds: { plain: 2, keyed: 0, limited: 0, steps: 0, ledger: 0, events: 0 },
    faults,
    crashes: [],
    logs,
    facts: dbFacts,
    finished: true,
  })

describe('the chaos verdict', () => {
  test('reads a worker file: a run without an end is unfinished', () => {
    expect(killed.runs).toEqual([
      expect.objectContaining({
        id: '1',
        attempt: 1,
        pid: 100,
        start: 1000,
        deadline: 2000,
        leaseFloor: 4000,
      }),
    ])
    expect(killed.runs[0]!.how).toBeUndefined()
    expect(second.runs.map((r) => r.how)).toEqual(['ok', 'ok'])
  })

  test('a re-run after a kill of the first run’s process is the kill’s, and nothing is wrong', () => {
    const { figures, violations } = judge([{ kind: 'kill', at: 1500, slot: 0, pid: 100, stopped: 1 }])
    expect(violations).toEqual([])
    expect(figures).toMatchObject({ reRuns: 1, lost: 0, overlaps: 0, insideLease: 0 })
    expect(figures.reRunsByCause).toMatchObject({ kill: 1, unattributed: 0 })
    expect(figures.faults).toMatchObject({ kills: 1, killsMidRun: 1 })
  })

  test('the same re-run with no fault to explain it is reported', () => {
    const { figures, violations } = judge([])
    expect(figures.reRunsByCause.unattributed).toBe(1)
    expect(violations.join('\n')).toMatch(/re-runs no injected fault explains/)
  })

  test('a fault that hit another process explains nothing', () => {
    const { figures } = judge([{ kind: 'cut', at: 1500, slot: 1, pid: 200, hit: 1 }])
    expect(figures.reRunsByCause).toMatchObject({ cut: 0, unattributed: 1 })
  })

  test('a re-run that starts inside the first run’s lease, or while it runs, is reported', () => {
    const early = parseRunLog(
      [
        'P 200 1 1100',
        'D 1200 4200',
        'S 1 2 1200 2200',
        'E 1 2 1210 ok',
        'S 2 1 1220 2220',
        'E 2 1 1230 ok',
      ].join('\n'),
    )
    const { figures, violations } = judge(
      [{ kind: 'kill', at: 1300, slot: 0, pid: 100, stopped: 1 }],
      [killed, early],
    )
    // The kill at 1300 came after the second run started at 1200: the runs overlapped.
    expect(figures.overlaps).toBe(1)
    expect(figures.insideLease).toBe(1)
    expect(violations.join('\n')).toMatch(/overlapped/)
  })

  test('a job missing from the archive is lost, and a dead-lettered one is reported', () => {
    const { figures, violations } = judge(
      [{ kind: 'kill', at: 1500, slot: 0, pid: 100, stopped: 1 }],
      undefined,
      {
        ...facts(),
        archive: [{ id: '1', name: 'chaos-plain', status: 'completed', attempts: 2, n: 0 }],
        dead: [{ id: '2', name: 'chaos-plain', attempts: 25, last_error: { message: 'boom' } }],
      },
    )
    expect(figures.lost).toBe(1)
    expect(figures.deadLettered).toBe(1)
    expect(violations.join('\n')).toMatch(/jobs not completed \(lost\)[\s\S]*job #1/)
  })

  test('a step job: a duplicated transactional effect, and a plain step run after its record, are reported', () => {
    const stepJob = { id: '3', name: 'chaos-steps', status: 'completed', attempts: 1, n: 2 }
    const run = parseRunLog(
      [
        'P 300 2 900',
        'D 1000 4000',
        'S 3 1 1000 2000',
        'T 3 plain-0 1001',
        'T 3 plain-1 1003',
        'E 3 1 1010 ok',
        // A defect: the completed plain-0 runs again after its record (at 1002).
        'T 3 plain-0 1500',
      ].join('\n'),
    )
    const { figures, violations } = analyse({
      total: 3,
      kinds: { plain: 2, keyed: 0, limited: 0, steps: 1, ledger: 0, events: 0 },
      faults: [],
      crashes: [],
      logs: [second, run],
      facts: facts({
        archive: [...facts().archive, stepJob],
        stepEffects: [
          { job_id: '3', step: 'tx-0', count: 2 },
          { job_id: '3', step: 'tx-1', count: 1 },
        ],
        steps: [
          { job_id: '3', step: 'plain-0', recorded_at: 1002 },
          { job_id: '3', step: 'plain-1', recorded_at: 1004 },
        ],
      }),
      finished: true,
    })
    expect(figures).toMatchObject({ stepEffectsWrong: 1, completedStepsReRun: 1, plainStepsRepeated: 1 })
    expect(violations.join('\n')).toMatch(/job 3 step tx-0: written 2 times/)
    expect(violations.join('\n')).toMatch(/job 3 step plain-0: ran at 1500, recorded at 1002/)
  })
  test('a step run put back at its limit after progress counts no claim, even when its process died before reporting it', () => {
    const stepJob = { id: '3', name: 'chaos-steps', status: 'completed', attempts: 1, n: 2 }
    // Worker 300 runs job 3 from 1000; its limit fires at 2000 after plain-0 completed (1100),
    // and the process is killed at 2050, before the drain wrote the run's outcome. Worker 200
    // runs it again as the same attempt at 5100 and completes it.
    const cut = parseRunLog(
      ['P 300 2 900', 'D 1000 4000', 'S 3 1 1000 2000', 'T 3 plain-0 1050', ''].join('\n'),
    )
    const again = parseRunLog(
      ['P 400 3 5000', 'D 5050 8000', 'S 3 1 5100 6100', 'E 3 1 5200 ok', ''].join('\n'),
    )
    const verdict = (steps: DbFacts['steps']) =>
      analyse({
        total: 3,
        kinds: { plain: 2, keyed: 0, limited: 0, steps: 1, ledger: 0, events: 0 },
        faults: [{ kind: 'kill', at: 2050, slot: 2, pid: 300, stopped: 1 }],
        crashes: [],
        logs: [killed, second, cut, again],
        facts: facts({
          archive: [...facts().archive, stepJob],
          stepEffects: [
            { job_id: '3', step: 'tx-0', count: 1 },
            { job_id: '3', step: 'tx-1', count: 1 },
          ],
          steps,
        }),
        finished: true,
      }).violations.join('\n')
    expect(verdict([{ job_id: '3', step: 'plain-0', recorded_at: 1100 }])).not.toMatch(/more often than/)
    // No step completed before its limit: nothing put it back uncounted, so two runs of one claim.
    expect(verdict([{ job_id: '3', step: 'plain-0', recorded_at: 5150 }])).toMatch(
      /ran more often than they were claimed[\s\S]*id 3 \(chaos-steps\): 2 runs, 1 claims/,
    )
  })
  test('a ledger job that starts before the one enqueued before it has returned is reported', () => {
    const ledger = (id: string, n: number) => ({
      id,
      name: 'chaos-ledger',
      status: 'completed',
      attempts: 1,
      n,
    })
    const verdict = (lines: string[]) =>
      analyse({
        total: 2,
        kinds: { plain: 0, keyed: 0, limited: 0, steps: 0, ledger: 2, events: 0 },
        faults: [],
        crashes: [],
        logs: [parseRunLog(['P 500 0 900', 'D 1000 4000', ...lines, ''].join('\n'))],
        facts: facts({ archive: [ledger('1', 0), ledger('2', 1)] }),
        finished: true,
      })
    // #0 returns at 1010, then #1 runs.
    const inOrder = verdict(['S 1 1 1000 2000', 'E 1 1 1010 ok', 'S 2 1 1020 2020', 'E 2 1 1030 ok'])
    expect(inOrder.violations).toEqual([])
    // #1 starts at 1005, while #0 runs.
    const overtaken = verdict(['S 1 1 1000 2000', 'S 2 1 1005 2005', 'E 1 1 1010 ok', 'E 2 1 1030 ok'])
    expect(overtaken.figures.ledgerOutOfOrder).toBe(1)
    expect(overtaken.violations.join('\n')).toMatch(
      /#1 \(id 2\) started at 1005 in pid 500; #0 returned at 1010/,
    )
  })
})
