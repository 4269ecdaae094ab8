"""A fake `harbor` for offline runs and tests: no Docker, no agent, no model, no verifier.

    python benchmarks/terminalbench/fake_harbor.py [--plan PLAN.json] run -p TASK ... -o DIR --job-name NAME

It reads the arguments seqk passes (`-p` or `-i`, `-o`, `--job-name`, the attempt number at
the end of the job name) and writes the files a Harbor trial leaves
(`<-o>/<job name>/<task>__<id>/result.json`, `agent/trajectory.json`,
`verifier/test-stdout.txt`) with a scripted outcome. Without a plan, attempt 1 of every task
fails and later attempts pass, so a seq@k run shows failure, feedback delivered through the
task copy's instruction.md, and success; nothing is measured. A plan (JSON) sets
`{"outcomes": {"<task>": ..., "<task>#<attempt>": ...}, "log": PATH}`, outcomes being pass,
fail, crash, missing (no result.json), hang or noreward; each call is logged as one JSON line.
Standard library only, so it runs under any Python.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def _opt(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args else None


def main(argv: list[str]) -> int:
    plan: dict = {}
    if argv[:1] == ["--plan"]:
        plan, argv = json.loads(Path(argv[1]).read_text()), argv[2:]
    args = argv[1:] if argv[:1] == ["run"] else argv
    job = _opt(args, "--job-name") or "job-1"
    package = _opt(args, "-p")
    task = _opt(args, "-i").split("/", 1)[1] if _opt(args, "-i") else Path(package or "task").name
    attempt = int(job.rsplit("-", 1)[1]) if job.rsplit("-", 1)[-1].isdigit() else 1
    instruction = (Path(package) / "instruction.md").read_text() if package else None
    if plan.get("log"):
        seen = {"argv": argv, "task": task, "attempt": attempt, "instruction": instruction,
                "has_key": "OPENAI_API_KEY" in os.environ}
        with open(plan["log"], "a") as log:
            log.write(json.dumps(seen) + "\n")
    outcomes = plan.get("outcomes", {})
    default = "fail" if attempt == 1 and not plan else "pass"
    outcome = outcomes.get(f"{task}#{attempt}") or outcomes.get(task, default)
    if outcome == "crash":
        print("Traceback (most recent call last):\nDockerError: daemon not running", file=sys.stderr)
        return 1
    if outcome == "missing":
        return 0
    if outcome == "hang":
        time.sleep(120)
    trial = Path(_opt(args, "-o") or "jobs") / job / f"{task}__AAA"
    (trial / "agent").mkdir(parents=True)
    (trial / "verifier").mkdir()
    tokens = {"n_input_tokens": 1000, "n_cache_tokens": 200, "n_output_tokens": 50}
    steps = [{"step_id": 1, "source": "user", "message": instruction or "FAKE INSTRUCTION"},
             {"step_id": 2, "source": "agent", "message": "Done.",
              "tool_calls": [{"function_name": "bash", "arguments": {"keystrokes": "echo ok\n"}}],
              "observation": {"results": [{"content": "ok"}]}}]
    if outcome == "pass":
        result = {"trial_name": f"{task}__AAA", "verifier_result": {"rewards": {"reward": 1.0}},
                  "agent_result": tokens, "exception_info": None}
        (trial / "verifier" / "test-stdout.txt").write_text("1 passed")
    elif outcome == "fail":
        result = {"trial_name": f"{task}__BBB", "verifier_result": {"rewards": {"reward": 0.0}},
                  "agent_result": tokens, "exception_info": None}
        (trial / "verifier" / "test-stdout.txt").write_text(
            "collected 1 item\nFAILED test_fake.py::test_x - AssertionError\n1 failed")
    else:
        result = {"trial_name": f"{task}__CCC", "verifier_result": None,
                  "exception_info": {"exception_type": "AgentTimeoutError", "exception_message": "fake timeout"}}
    (trial / "result.json").write_text(json.dumps(result))
    (trial / "agent" / "trajectory.json").write_text(json.dumps({"steps": steps}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
