export type { DrainDefaults, ResolvedConfig, SluiceOptions } from './config.js'
export type { BatchOptions, ControlsApi } from './controls/api.js'
export type { BatchCallbacks, BatchRow } from './controls/batches.js'
export type { CircuitBreakerOptions, QueueOptions, QueueStateRow } from './controls/queues.js'
export {
  defineRecurring,
  type RecurringOptions,
  type RecurringRun,
  type RecurringTask,
} from './controls/recurring.js'
export {
  SIGNATURE_HEADER,
  type SignedHeaders,
  type SignedRequest,
  sign,
  TIMESTAMP_HEADER,
} from './crypto/signature.js'
export { fromClient } from './db/client.js'
export { connect } from './db/connect.js'
export { PG } from './db/errors.js'
export { instrument } from './db/instrument.js'
export { fromNeonHttp } from './db/neon-http.js'
export { fromNeonPool, fromPg } from './db/pg.js'
export { fromPglite } from './db/pglite.js'
export type { Db, DriverKind, Queryable, QueryEvent, QueryHook, QueryResult, Statement } from './db/types.js'
export type { DrainOptions, DrainSummary, JobRun, StopReason } from './drain/options.js'
export {
  ConfigError,
  ConflictError,
  DatabaseError,
  type ErrorCode,
  type Issue,
  NotFoundError,
  PayloadTooLargeError,
  PermanentJobError,
  SlowDownError,
  SluiceError,
  UnknownJobError,
  UnsupportedError,
  ValidationError,
} from './errors.js'
export type { EventsApi, ReplayQuery } from './events/api.js'
export type { EventOptions } from './events/options.js'
export type { PublishOptions, PublishResult } from './events/publish.js'
export {
  AlreadyProcessedError,
  type AnySubscriber,
  defineSubscriber,
  type EventEnvelope,
  type EventInfo,
  type SubscriberContext,
  type SubscriberDefinition,
  type SubscriberOptions,
} from './events/subscriber.js'
export { patternRegex, topicMatches } from './events/topics.js'
export type { AdminOptions } from './http/admin/app.js'
export { type AppOptions, createApp } from './http/app.js'
export {
  type AuthCheck,
  type AuthMiddleware,
  anyAuth,
  type BearerAuthOptions,
  bearerAuth,
  type CronAuthOptions,
  cronAuth,
  type SignatureAuthOptions,
  signatureAuth,
} from './http/auth.js'
export { type DrainAppOptions, drainApp, maintainApp } from './http/drain-app.js'
export type { ErrorBody, ErrorReporter } from './http/errors.js'
export type { AppAuthOptions } from './http/guards.js'
export { toPrometheus } from './http/prometheus.js'
export type {
  BatchesQuery,
  DatabaseOptions,
  Inspect,
  JobDetail,
  JobsQuery,
  PartitionsQuery,
  StatsQuery,
} from './inspect.js'
export type { AdmissionOptions, AdmissionPolicy, PerInput } from './jobs/admission.js'
export {
  type AnyContract,
  type ContractOptions,
  defineContract,
  type JobContract,
} from './jobs/contract.js'
export type { ConcurrencyOptions, UniqueOptions } from './jobs/define.js'
export {
  type AnyJob,
  backoffDelay,
  DEFAULT_PRIORITY,
  DEFAULT_RETRY,
  defineJob,
  type JobContext,
  type JobDefinition,
  type JobInput,
  type JobOptions,
  type JobShape,
  MAX_PRIORITY,
  MIN_PRIORITY,
  type RetryPolicy,
} from './jobs/define.js'
export type { EnqueueOptions, EnqueueResult } from './jobs/enqueue.js'
export type { EnqueueEvent, ExecutionEvent, Hooks } from './jobs/hooks.js'
export type {
  Duration,
  InvokeTarget,
  StepFunction,
  Steps,
  WaitedEvent,
  WaitForEventOptions,
} from './jobs/steps.js'
export type { JobAttempt } from './jobs/timeline.js'
export type {
  MaintenanceOptions,
  MaintenanceReport,
  MaintenanceTask,
  TaskReport,
} from './maintain/maintain.js'
export type { MigrateResult } from './migrate/run.js'
export { createSluice, type DeadLetterQuery, type Sluice } from './sluice.js'
export type { PartitionMetrics, PartitionRow, PolicyRow } from './sql/admission.js'
export type { DatabaseHealth, HorizonHolder, TableHealth } from './sql/database.js'
export type { DeadLetterRetry, DeadLetterRow, KeptDeadLetter } from './sql/dead-letters.js'
export type { JobDetailRow, JobResultRow, JobRow, JobState, JobStep } from './sql/jobs.js'
export type { EventsView, Locks } from './sql/lock-views.js'
export type { QueueMetrics, Scrape } from './sql/metrics.js'
export type { Overview } from './sql/overview.js'
export type { RecurringTaskRow } from './sql/recurring.js'
export type { JobStats } from './sql/stats.js'
export type { InvocationRow, MaintenanceRow, StatusRow } from './sql/status.js'
export type { StepRow } from './sql/steps.js'
export {
  ChildJobFailedError,
  LeaseLostError,
  MAX_RESULT_BYTES,
  NonDeterminismError,
  ResultTooLargeError,
} from './steps/errors.js'
export type { TracerProviderLike, TracingOption } from './tracing/option.js'
