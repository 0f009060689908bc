-- A job of a single-consumer queue keeps its place while leased: the claim moves run_at to the
-- lease's end, so the due time it had is kept here. When its lease runs out (its drain died) or
-- its claim's reply was lost, it goes back at that place, ahead of the queue's later jobs, rather
-- than behind them. Null for every other job, and for single-consumer jobs leased before this.
ALTER TABLE :SLUICE_SCHEMA.jobs ADD COLUMN place_at timestamptz;
