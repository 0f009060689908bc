-- Wake-ups instead of LISTEN/NOTIFY: the last time each queue's drains were woken, so that
-- enqueues wake them at most once per debounce window.
CREATE TABLE :SLUICE_SCHEMA.wakeups (
  queue text PRIMARY KEY,
  last_at timestamptz NOT NULL
);
