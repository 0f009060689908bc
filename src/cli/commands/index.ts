import type { AnyCommand } from '../command.js'
import { dlq } from './dlq.js'
import { drain } from './drain.js'
import { enqueue } from './enqueue.js'
import { job } from './job.js'
import { maintain } from './maintain.js'
import { migrate } from './migrate.js'
import { partitions, policies } from './partitions.js'
import { pause, resume } from './pause.js'
import { publish } from './publish.js'
import { queues } from './queues.js'
import { status } from './status.js'

/** Every command but `dev`: each runs here or, while `sluice dev` holds the embedded database, inside it. */
export const COMMANDS: ReadonlyMap<string, AnyCommand> = new Map(
  [
    migrate,
    enqueue,
    publish,
    drain,
    maintain,
    status,
    queues,
    job,
    dlq,
    pause,
    resume,
    policies,
    partitions,
  ].map((c) => [c.name, c]),
)
