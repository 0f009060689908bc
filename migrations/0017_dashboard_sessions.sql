-- The dashboard's log-in throttle and ended sessions: rows, so that every instance of a
-- serverless deployment sees the same, and nothing is held in a process or a database session.
--
-- One row per client (its address, as the platform reports it) that has tried the log-in
-- recently: how many attempts since its last right one, and when it may try again. A right
-- secret deletes the row; rows idle for a day are deleted by later attempts.
CREATE TABLE :SLUICE_SCHEMA.login_attempts (
  client text PRIMARY KEY,
  attempts integer NOT NULL,
  last_attempt_at timestamptz NOT NULL,
  blocked_until timestamptz NOT NULL
);

-- Sessions ended by logging out, until they would have expired anyway: a copy of the cookie
-- stops working with the logout. `session` is the nonce of the session's cookie.
CREATE TABLE :SLUICE_SCHEMA.ended_sessions (
  session text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
