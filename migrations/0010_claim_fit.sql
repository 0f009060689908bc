-- The claim's signature changed (it takes the names of jobs a drain cannot fit in its time left,
-- and returns the claim_row type): the 0.1.0 forms are dropped here, and the claim and
-- relay_and_claim of functions/claim.sql, applied after the migrations, replace them.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.relay_and_claim(integer, text[], integer, bigint, text, integer, integer);

DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.claim(text[], integer, bigint, text, integer, integer);
