/**
 * The operator's controls over the partitions of admission policies (pause, resume, cap
 * override): the arguments they take, checked. The claim reads what they write
 * (migrations/functions/admission_claim.sql): a paused partition admits nothing, and a cap override
 * wins over the partition's concurrency and adaptive cap (0 admits nothing).
 */
import * as z from 'zod/mini'
import { toIssues, ValidationError } from '../errors.js'

const noNul = (s: string) => !s.includes('\u0000')

/** A policy is named by its job: a non-empty string of at most 512 characters. */
export const policyNameSchema = z.lazy(() =>
  z
    .string()
    .check(
      z.minLength(1, 'must not be empty'),
      z.maxLength(512, 'must be at most 512 characters'),
      z.refine(noNul, 'must not contain NUL'),
    ),
)

/** A partition key as `admission.partition` returns it: at most 512 characters, '' for a policy's only partition. */
export const partitionKeySchema = z.lazy(() =>
  z
    .string()
    .check(z.maxLength(512, 'must be at most 512 characters'), z.refine(noNul, 'must not contain NUL')),
)

/** A cap override: a whole number of running jobs, 0 (admit nothing) to 1,000,000; null clears it. */
export const partitionCapSchema = z.lazy(() =>
  z.nullable(
    z
      .number()
      .check(
        z.int('must be a whole number'),
        z.minimum(0, 'must be at least 0'),
        z.maximum(1_000_000, 'must be at most 1000000'),
      ),
  ),
)

const refSchema = z.lazy(() => z.strictObject({ policy: policyNameSchema, partition: partitionKeySchema }))

function check<T>(schema: z.ZodMiniType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  const path = issue?.path.length ? `${issue.path.join('.')} ` : ''
  throw new ValidationError(`Invalid ${what}: ${path}${issue?.message}`, toIssues(parsed.error.issues))
}

/** A policy's name, checked. */
export function parsePolicyName(policy: unknown): string {
  return check(policyNameSchema, policy, 'policy name')
}

/** A policy and one of its partitions, checked. */
export function parsePartitionRef(
  policy: unknown,
  partition: unknown,
): { policy: string; partition: string } {
  return check(refSchema, { policy, partition }, 'partition')
}

/** A cap override, checked. */
export function parsePartitionCap(cap: unknown): number | null {
  return check(partitionCapSchema, cap, 'partition cap')
}
