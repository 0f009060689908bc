import type { Sluice } from '../src/index.js'

/**
 * The example app's own tables, in a schema of their own beside Sluice's. Safe to run from
 * several processes at once and on every start: one transaction, serialised by a
 * transaction-scoped lock, creating only what is missing.
 */
export async function setup(sluice: Sluice): Promise<void> {
  const db = await sluice.db()
  const statements = [
    "SELECT pg_advisory_xact_lock(hashtext('sluice.example.setup'))",
    'CREATE SCHEMA IF NOT EXISTS example',
    `CREATE TABLE IF NOT EXISTS example.outbox (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      -- At-least-once delivery: a job that runs twice finds its row and adds nothing.
      dedupe_key text NOT NULL UNIQUE,
      recipient text NOT NULL,
      subject text NOT NULL,
      body text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE IF NOT EXISTS example.images (
      image_id text NOT NULL,
      width integer NOT NULL,
      resized_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (image_id, width)
    )`,
    `CREATE TABLE IF NOT EXISTS example.order_audit (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      event_id text NOT NULL,
      topic text NOT NULL,
      order_id text NOT NULL,
      at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE IF NOT EXISTS example.fulfilments (
      order_id text PRIMARY KEY,
      customer text,
      queued_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE IF NOT EXISTS example.reports (
      day date PRIMARY KEY,
      emails integer NOT NULL,
      images integer NOT NULL,
      generated_at timestamptz NOT NULL DEFAULT now()
    )`,
  ]
  await db.batch(statements.map((text) => ({ text, values: [] })))
}
