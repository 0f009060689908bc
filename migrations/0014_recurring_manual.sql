-- A recurring task's run enqueued by hand (triggerRecurring), outside its schedule: recorded in
-- its history like a slot, marked so.
ALTER TABLE :SLUICE_SCHEMA.recurring_runs ADD COLUMN manual boolean NOT NULL DEFAULT false;
