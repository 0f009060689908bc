/**
 * `sluice/edge`: enqueue and publish from edge runtimes (Vercel Edge, Cloudflare Workers)
 * over Neon's HTTP driver, as a client (createEdgeClient) or as the HTTP routes
 * (createEnqueueApp: `POST /jobs/:name`, `POST /events/:topic`). No handler code, no Node built-ins.
 */

export { fromNeonHttp } from './db/neon-http.js'
export type { Db, DriverKind } from './db/types.js'
export { createEnqueueApp, type EnqueueAppOptions } from './edge/app.js'
export {
  createEdgeClient,
  type EdgeClient,
  type EdgeClientOptions,
  type EdgeEnqueueOptions,
  type EdgeEnqueueResult,
  type EdgePublishOptions,
} from './edge/client.js'
export {
  ConfigError,
  type ErrorCode,
  type Issue,
  PayloadTooLargeError,
  SluiceError,
  UnknownJobError,
  ValidationError,
} from './errors.js'
export type { PublishResult } from './events/publish.js'
export { topicMatches } from './events/topics.js'
export { type AnyContract, type ContractOptions, defineContract, type JobContract } from './jobs/contract.js'
export { DEFAULT_PRIORITY, type JobInput, type JobShape, MAX_PRIORITY, MIN_PRIORITY } from './jobs/define.js'
export { seeWakeupsOut, vercelWaitUntil, type WaitUntil, waitUntil } from './platforms/wait-until.js'
