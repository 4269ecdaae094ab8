-- name: find_task(run_id, task_index, task_id) -> rows
-- (task_index, task_id, prompt, meta) of a run's task chosen by index or by id.
SELECT task_index, task_id, prompt, meta
FROM tasks
WHERE run_id = $run_id AND (task_index = $task_index OR task_id = $task_id);

-- name: task_attempts(run_id, task_index) -> rows
-- Every attempt row of one task in the run's current generation, superseded errors included,
-- by chain and in attempt order; `counts` says whether it is the row the metrics use.
SELECT a.attempt_uid, a.attempt_index, a.k, a.status, a.success, a.score, a.prompt, a.output,
       a.raw_eval_output, a.judge_details, a.feedback, a.error, a.started_at, a.finished_at,
       a.chain_index,
       a.attempt_uid IN (SELECT attempt_uid FROM current_attempts_of(run_ids := [$run_id])
                         WHERE task_index = $task_index) AS counts
FROM attempts a JOIN runs r ON a.run_id = r.run_id AND a.generation = r.generation
WHERE a.run_id = $run_id AND a.task_index = $task_index
ORDER BY a.chain_index, a.attempt_index, a.finished_at;

-- name: task_calls(run_id, task_index) -> rows
-- Every LLM call of one task in the run's current generation, by chain, attempt and call order.
SELECT c.attempt_uid, c.attempt_index, c.call_index, c.role, c.model, c.prompt, c.output,
       c.input_tokens, c.cached_tokens, c.thinking_tokens, c.output_tokens, c.cost_usd,
       c.latency_s, c.retries, c.error, c.chain_index
FROM current_calls c
WHERE c.run_id = $run_id AND c.task_index = $task_index
ORDER BY c.chain_index, c.attempt_index, c.started_at, c.call_index;
