-- generate.sql fills a migrated, empty toolscore database with :rows
-- generated evaluation results of project 1 spread over the :days days
-- before now, for the console's benchmarks (BENCHMARKS.md, "Console"):
--
--   psql "$DATABASE_URL" -v rows=1000000 -v days=90 -f internal/ui/testdata/generate.sql
--
-- (BenchmarkConsole runs it through pgx with the same two settings.) It is
-- reproducible: setseed fixes every random choice, ids are derived from
-- the row number, times count back from now. Three registry contracts
-- (flights v1-v3, hotels v1-v2, refunds v1) and inline contracts; six
-- agents; labels env and model; about 45 % pass, by contract version and
-- in slow waves over time; the first issue is one of
-- seven kinds. 5 % of the flights@1 originals also have a regrade result
-- against flights@3, from one completed regrade.

SELECT setseed(0.16);

INSERT INTO contracts (project_id, name, version, sha256, kind, description, combinations, body, created_at)
SELECT 1, c.name, c.version, encode(sha256(convert_to(c.name || '@' || c.version, 'UTF8')), 'hex'),
       'contract', c.name || ' contract, version ' || c.version, 2,
       '{"contract_version":2,"name":"' || c.name || '","required":[{"tool":"search_' || c.name || '","args":{"v":' || c.version || '}}]}',
       now() - make_interval(days => :days + 1 - c.version)
FROM (VALUES ('flights', 1), ('flights', 2), ('flights', 3), ('hotels', 1), ('hotels', 2), ('refunds', 1)) AS c(name, version);

-- One row per result: r is a random number per row that picks everything.
CREATE TEMP TABLE gen AS
SELECT i,
       now() - make_interval(secs => (i::double precision / :rows) * :days * 86400) AS created_at,
       random() AS r1, random() AS r2, random() AS r3, random() AS r4
FROM generate_series(1, :rows) AS i;

INSERT INTO results (id, project_id, created_at, contract_name, contract_version, contract_sha256, contract_kind,
                     task_id, run_id, agent, labels, trace_format, score, grade, passed, min_score, safety_gate,
                     options, expected_calls, trace_calls, scored_indexes, final_answer, metrics, checks, issues)
SELECT md5('result-' || g.i)::uuid, 1, g.created_at,
       c.name, c.version, coalesce(c.sha, repeat('ab', 32)), 'contract',
       'task-' || (g.i % 500), 'run-' || (g.i / 1000), 'agent-' || (floor(g.r2 * 6))::int,
       jsonb_build_object('env', CASE WHEN g.r3 < 0.7 THEN 'prod' ELSE 'staging' END, 'model', 'model-' || (floor(g.r3 * 4))::int),
       'openai', s.score, s.grade, s.score >= 0.8, 0.8, true,
       '{"strict":false,"safety_gate":true}',
       '[{"tool":"search_flights","args":{"destination":"LIS"}},{"tool":"reserve_seat","args":{"flight_id":{"$regex":"^FL-\\d+$"}}}]',
       '[{"tool":"search_flights","args":{"date":"2026-12-18","destination":"LIS"},"id":"call_1","result":"{\"flights\": [{\"flight_id\": \"FL-204\"}]}"},{"tool":"get_weather","args":{"city":"Lisbon"},"id":"call_2"},{"tool":"reserve_seat","args":{"flight_id":"FL-204","seat":"12A"},"id":"call_3","result":"{\"status\": \"reserved\"}"}]',
       '[0,2]', 'Your seat 12A on flight FL-204 to Lisbon is reserved.',
       ('{"selection_accuracy":1,"invocation_accuracy":1,"required_call_recall":1,"argument_metrics":{"precision":0.75,"recall":1,"f1":0.857},"sequence_metrics":{"edit_distance":0,"normalized_distance":0,"sequence_accuracy":1},"efficiency_metrics":{"redundant_count":0,"total_calls":2,"redundant_rate":0},"tool_correctness_metrics":{"tool_correctness":1,"expected_tools":["reserve_seat","search_flights"],"called_tools":["reserve_seat","search_flights"],"missing_tools":[],"extra_tools":[],"correct_count":2,"total_expected":2},"weights":{"selection_accuracy":0.3,"argument_f1":0.25,"sequence_accuracy":0.15,"redundant_rate":0.05,"required_call_recall":0.25}}')::json,
       '{"pass":7,"fail":0,"unknown":0,"items":[{"name":"required-calls","status":"pass","detail":"all 2 expected calls satisfied","calls":[0,2]}]}',
       CASE WHEN s.grade = 'A' AND g.r4 < 0.5 THEN '[]'
            ELSE '[' || (ARRAY[
              '{"kind":"arguments","severity":"low","tool":"reserve_seat","problem":"`reserve_seat` called with unexpected arguments (unexpected: seat)","fix":"In the call to `reserve_seat`: drop `seat`","calls":[2]}',
              '{"kind":"missing-call","severity":"high","tool":"reserve_seat","problem":"`reserve_seat` was never called","fix":"Call `reserve_seat` after `search_flights`","calls":[]}',
              '{"kind":"wrong-tool","severity":"high","tool":"book_hotel","problem":"`book_hotel` is not an expected tool","fix":"Do not call `book_hotel`","calls":[1]}',
              '{"kind":"order","severity":"medium","tool":"reserve_seat","problem":"`reserve_seat` (#0) was called before `search_flights` (#1), against the expected order","fix":"Call `search_flights` first","calls":[0,1]}',
              '{"kind":"redundant","severity":"low","tool":"search_flights","problem":"`search_flights` was called 3 times, expected once","fix":"Call `search_flights` once","calls":[0,1,2]}',
              '{"kind":"tool-error","severity":"medium","tool":"get_weather","problem":"`get_weather` (#1) failed and no later call of it succeeded","fix":"Retry `get_weather` or report its failure","calls":[1]}',
              '{"kind":"forbidden-call","severity":"critical","tool":"cancel_booking","problem":"`cancel_booking` is forbidden: never cancel without asking","fix":"Do not call `cancel_booking`","calls":[2]}'
            ])[1 + (floor(g.r4 * 7))::int] || ']'
       END
FROM gen g
CROSS JOIN LATERAL (SELECT CASE WHEN g.r1 < 0.12 THEN NULL WHEN g.r1 < 0.55 THEN 'flights' WHEN g.r1 < 0.85 THEN 'hotels' ELSE 'refunds' END AS name) n
CROSS JOIN LATERAL (SELECT n.name,
       CASE n.name WHEN 'flights' THEN 1 + (g.i % 3) WHEN 'hotels' THEN 1 + (g.i % 2) WHEN 'refunds' THEN 1 END AS version) cv
CROSS JOIN LATERAL (SELECT cv.name, cv.version,
       (SELECT sha256 FROM contracts k WHERE k.project_id = 1 AND k.name = cv.name AND k.version = cv.version) AS sha) c
CROSS JOIN LATERAL (SELECT round(least(1, greatest(0, 0.32 + 0.65 * power(g.r2 * 0.5 + g.r3 * 0.5, 0.6)
       + CASE coalesce(c.name, '') || coalesce(c.version, 0) WHEN 'flights1' THEN -0.04 WHEN 'flights3' THEN 0.05
              WHEN 'hotels2' THEN 0.03 WHEN 'refunds1' THEN -0.06 ELSE 0 END
       + 0.04 * sin(g.i::double precision / :rows * 12)))::numeric, 4)::double precision AS score) sc
CROSS JOIN LATERAL (SELECT sc.score,
       CASE WHEN sc.score >= 0.9 THEN 'A' WHEN sc.score >= 0.8 THEN 'B' WHEN sc.score >= 0.7 THEN 'C' WHEN sc.score >= 0.6 THEN 'D' ELSE 'F' END AS grade) s;

-- One completed regrade of flights@1 against flights@3: a new result for
-- 5 % of its originals, 1 % of them flipped.
INSERT INTO regrades (id, project_id, state, contract_name, contract_version, contract_sha256, selection, snapshot_at,
                      chunk_size, total, chunks, chunks_done, done, failed, pass_to_fail, fail_to_pass, changed, score_delta_sum,
                      created_at, started_at, finished_at)
SELECT md5('regrade-1')::uuid, 1, 'completed', 'flights', 3, sha256, '{"contract_name":"flights","from_versions":[1]}', now(),
       1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, now(), now(), now()
FROM contracts WHERE project_id = 1 AND name = 'flights' AND version = 3;

INSERT INTO results (id, project_id, created_at, contract_name, contract_version, contract_sha256, contract_kind,
                     task_id, run_id, agent, labels, trace_format, score, grade, passed, min_score, safety_gate,
                     options, expected_calls, trace_calls, scored_indexes, final_answer, metrics, checks, issues,
                     regrade_of, regrade_id)
SELECT md5('regraded-' || o.id)::uuid, 1, now() - interval '1 hour', 'flights', 3, k.sha256, 'contract',
       o.task_id, o.run_id, o.agent, o.labels, o.trace_format,
       least(1, o.score + 0.05), CASE WHEN o.score + 0.05 >= 0.9 THEN 'A' WHEN o.score + 0.05 >= 0.8 THEN 'B' WHEN o.score + 0.05 >= 0.7 THEN 'C' WHEN o.score + 0.05 >= 0.6 THEN 'D' ELSE 'F' END,
       o.score + 0.05 >= 0.8, o.min_score, o.safety_gate, o.options, o.expected_calls, o.trace_calls, o.scored_indexes,
       o.final_answer, o.metrics, o.checks, o.issues, o.id, md5('regrade-1')::uuid
FROM results o, contracts k
WHERE o.contract_name = 'flights' AND o.contract_version = 1 AND o.regrade_id IS NULL AND abs(hashtext(o.id::text)) % 20 = 0
  AND k.project_id = 1 AND k.name = 'flights' AND k.version = 3;

INSERT INTO regrade_changes (regrade_id, original_id, result_id, old_version, old_score, new_score, old_grade, new_grade, old_passed, new_passed, old_issue, new_issue)
SELECT r.regrade_id, r.regrade_of, r.id, 1, o.score, r.score, o.grade, r.grade, o.passed, r.passed,
       (o.issues::json -> 0)::jsonb, (r.issues::json -> 0)::jsonb
FROM results r JOIN results o ON o.id = r.regrade_of
WHERE r.regrade_id = md5('regrade-1')::uuid AND (o.grade <> r.grade OR o.passed <> r.passed);

UPDATE regrades SET
    total = (SELECT count(*) FROM results WHERE regrade_id = md5('regrade-1')::uuid),
    done = (SELECT count(*) FROM results WHERE regrade_id = md5('regrade-1')::uuid),
    chunks = 1, chunks_done = 1,
    changed = (SELECT count(*) FROM regrade_changes WHERE regrade_id = md5('regrade-1')::uuid),
    fail_to_pass = (SELECT count(*) FROM regrade_changes WHERE regrade_id = md5('regrade-1')::uuid AND new_passed AND NOT old_passed),
    pass_to_fail = (SELECT count(*) FROM regrade_changes WHERE regrade_id = md5('regrade-1')::uuid AND old_passed AND NOT new_passed),
    score_delta_sum = (SELECT coalesce(sum(r.score - o.score), 0) FROM results r JOIN results o ON o.id = r.regrade_of WHERE r.regrade_id = md5('regrade-1')::uuid)
WHERE id = md5('regrade-1')::uuid;

DROP TABLE gen;
ANALYZE results;
