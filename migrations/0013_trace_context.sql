-- Trace context: a job enqueued (or published) inside a traced operation carries the W3C trace
-- context of that operation, `traceparent` and, when there is one, a space and `tracestate`
-- (`00-<trace id>-<span id>-<flags>[ <tracestate>]`). The drain's span for each run of the job is a
-- child of it. Null when nothing was traced. A blocked job keeps it until it is promoted.
ALTER TABLE :SLUICE_SCHEMA.jobs ADD COLUMN trace_context text;

ALTER TABLE :SLUICE_SCHEMA.blocked ADD COLUMN trace_context text;
