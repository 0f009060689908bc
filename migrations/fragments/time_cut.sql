-- The claim's stop for lack of time, written once for claim_open and claim_pick: per queue, the
-- first of the walk's candidates (:ROW, a CTE with queue, name, priority, run_at and id) whose job
-- the drain cannot fit in its time left (named in p_defer). It and everything behind it in that
-- queue stay where they are, in order, for a drain with time. A CTE's body, placed where a
-- function file says `cut AS :TIME_CUT(candidates)`.
SELECT DISTINCT ON (c.queue) c.queue, c.name, c.priority, c.run_at, c.id
FROM :ROW c
WHERE c.name = ANY (p_defer)
ORDER BY c.queue, c.priority, c.run_at, c.id
