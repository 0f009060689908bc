import type { Scenario } from '../lib/types.js'
import { bundles } from './bundles.js'
import { claimLatency } from './claim-latency.js'
import { cost } from './cost.js'
import { edge } from './edge.js'
import { enqueue } from './enqueue.js'
import { heldXmin } from './held-xmin.js'
import { httpDrain } from './http-drain.js'
import { network } from './network.js'
import { processing } from './processing.js'
import { rawProbe } from './raw-probe.js'
import { statements } from './statements.js'
import { steps } from './steps.js'
import { wakeLatency } from './wake-latency.js'

/** Every scenario, in run order. A new scenario is a module here plus one line below. */
export const scenarios: readonly Scenario[] = [
  processing,
  enqueue,
  statements,
  claimLatency,
  rawProbe,
  wakeLatency,
  httpDrain,
  bundles,
  network,
  heldXmin,
  cost,
  edge,
  steps,
]
