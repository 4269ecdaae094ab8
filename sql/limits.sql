-- Each endpoint's limit on calls in flight, remembered across runs (seqk.run.limits).

-- name: append_endpoint_limit(api_base, model, sustained, bounded, ceiling, rate_limited, calls, run_id) -> none
-- Appends what an endpoint sustained in one invocation (a reset: sustained, ceiling and run_id
-- NULL), stamped now; returns nothing.
INSERT INTO endpoint_limits (api_base, model, sustained, bounded, ceiling, rate_limited, calls,
                             run_id, recorded_at)
VALUES ($api_base, $model, $sustained, $bounded, $ceiling, $rate_limited, $calls, $run_id,
        now()::TIMESTAMP);

-- name: latest_endpoint_limits() -> rows
-- The newest row of each (api_base, model), forgotten ones (sustained NULL) included, with its
-- age in hours, by api_base and model.
SELECT api_base, model, sustained, bounded, ceiling, rate_limited, calls, run_id, recorded_at,
       epoch(now()::TIMESTAMP - recorded_at) / 3600.0 AS age_hours
FROM endpoint_limits
QUALIFY row_number() OVER (PARTITION BY api_base, model ORDER BY recorded_at DESC) = 1
ORDER BY api_base, model;
