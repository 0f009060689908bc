import type { JobContext } from './define.js'
import type { EnqueueResult } from './enqueue.js'

export interface EnqueueEvent {
  job: string
  queue: string
  input: unknown
  priority: number
}

export interface ExecutionEvent {
  job: string
  queue: string
  input: unknown
  context: JobContext
}

export type FatalPhase = 'enqueue-hook' | 'execution-hook' | 'failure-hook' | 'drain'

/**
 * Lifecycle hooks. Before-hooks may veto (a throwing beforeEnqueue rejects the enqueue,
 * a throwing beforeExecution fails the attempt, which is then retried); errors in
 * after-hooks and failure hooks are reported to onFatalError and never change the job's fate.
 */
export interface Hooks {
  beforeEnqueue?(event: EnqueueEvent): void | Promise<void>
  aroundEnqueue?(event: EnqueueEvent, next: () => Promise<unknown>): Promise<unknown>
  /** `id` is the first job's id (null when it was a duplicate or discarded); `results` has one entry per input. */
  afterEnqueue?(event: EnqueueEvent & { id: string | null; results: EnqueueResult[] }): void | Promise<void>
  beforeExecution?(event: ExecutionEvent): void | Promise<void>
  aroundExecution?(event: ExecutionEvent, next: () => Promise<unknown>): Promise<unknown>
  afterExecution?(event: ExecutionEvent & { result: unknown; durationMs: number }): void | Promise<void>
  onFailure?(event: ExecutionEvent & { error: unknown; willRetry: boolean }): void | Promise<void>
  /** An error outside any job: a hook that threw after the fact, a drain that could not settle. */
  onFatalError?(error: unknown, info: { phase: FatalPhase; job?: string }): void
}

const HOOK_KEYS: readonly (keyof Hooks)[] = [
  'beforeEnqueue',
  'aroundEnqueue',
  'afterEnqueue',
  'beforeExecution',
  'aroundExecution',
  'afterExecution',
  'onFailure',
  'onFatalError',
]

export class HookRunner {
  /** The hooks at least one of `hooks` defines. */
  private readonly defined: ReadonlySet<keyof Hooks>

  constructor(private readonly hooks: readonly Hooks[]) {
    const defined = new Set<keyof Hooks>()
    for (const hook of hooks) {
      for (const key of HOOK_KEYS) if (typeof hook[key] === 'function') defined.add(key)
    }
    this.defined = defined
  }

  /** Whether any hook defines `key`: a caller may then skip building its event and awaiting it. */
  has(key: keyof Hooks): boolean {
    return this.defined.has(key)
  }

  fatal(error: unknown, info: { phase: FatalPhase; job?: string }): void {
    for (const hook of this.hooks) {
      try {
        hook.onFatalError?.(error, info)
      } catch {
        // Nothing is left to report a failing error reporter to.
      }
    }
  }

  /** Runs before-hooks in order; the first to throw stops the operation. */
  async before<K extends 'beforeEnqueue' | 'beforeExecution'>(
    key: K,
    event: Parameters<NonNullable<Hooks[K]>>[0],
  ): Promise<void> {
    for (const hook of this.hooks) {
      const fn = hook[key] as ((e: typeof event) => void | Promise<void>) | undefined
      if (fn) await fn.call(hook, event)
    }
  }

  /** Wraps `core` in every around-hook, the first registered outermost. */
  around<E, R>(key: 'aroundEnqueue' | 'aroundExecution', event: E, core: () => Promise<R>): Promise<R> {
    const chain = this.hooks.reduceRight<() => Promise<R>>((next, hook) => {
      const fn = hook[key] as ((e: E, n: () => Promise<unknown>) => Promise<unknown>) | undefined
      return fn ? () => fn.call(hook, event, next) as Promise<R> : next
    }, core)
    return chain()
  }

  /** Runs after-the-fact hooks; their errors are reported, never thrown. */
  async after<K extends 'afterEnqueue' | 'afterExecution' | 'onFailure'>(
    key: K,
    event: Parameters<NonNullable<Hooks[K]>>[0],
    job: string,
  ): Promise<void> {
    for (const hook of this.hooks) {
      const fn = hook[key] as ((e: typeof event) => void | Promise<void>) | undefined
      if (!fn) continue
      try {
        await fn.call(hook, event)
      } catch (error) {
        this.fatal(error, {
          phase:
            key === 'afterEnqueue' ? 'enqueue-hook' : key === 'onFailure' ? 'failure-hook' : 'execution-hook',
          job,
        })
      }
    }
  }
}
