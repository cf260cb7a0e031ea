"""The packaged agents beside the default agent: what each costs a sample, at 1, 8 and 32 at once.

Each run is one ``inspect eval inspect_gaia/gaia -T agent=NAME`` process on the agents image, on
the synthetic snapshot (``fixture.write_dataset``: question ``i`` asks how many lines its
attachment has, answer 20), driven by the scripted model at ``--latency`` seconds a reply. Each
sample makes ``--turns`` shell calls (``wc -l`` of its attachment) in the agent's own tool, then
answers: the default agent by ``submit``, the others by ``FINAL ANSWER: 20`` in their last
message (mini-swe-agent with its exit command). So every agent makes ``turns + 1`` model calls a
sample, the same model time; whatever else a sample takes is the harness's or the agent's.

Per run: wall against the model-bound ideal (``samples at once`` in one wave: ``(turns + 1) x
latency``), the inspect process's CPU seconds (``os.wait4``) and the sandboxes' (their cgroups'
``cpuacct``, ``agent_samples.SandboxPoll``) per model turn, each sandbox's memory at its peak and
while it waits on its model, and per sample (from the log) the time from its sandbox being ready
to its first model request and from its last reply to its score. The agents run in turn at each
level, ``--rounds`` times (alternating, so the machine's other work falls on all alike); the
report has the medians of the rounds, and each agent's figures over the default agent's.

    python -m benchmarks.agents                                  # 3 rounds at 1, 8, 32 at once
    python -m benchmarks.agents --quick --out /tmp/agents.md     # smoke test, 1 round at 1 and 2
    python -m benchmarks.agents --agents basic,codex_cli --levels 1 --variant before:16f4e46
    python -m benchmarks.agents --levels 1,32 --rounds 1 --processes   # whose CPU a sandbox's is

``--variant NAME:REF`` runs every agent a second time on ``src/`` as of git ``REF`` (frozen, as
``load_cpu.export_src``; an agent that code does not know is skipped), in turn with the working
tree's: the overhead before and after a change, in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from benchmarks.agent_report import report
from benchmarks.agent_samples import (
    GROUPS,
    AgentRun,
    Plan,
    SandboxPoll,
    memory_figures,
    sample_times,
)
from benchmarks.fixture import task_id, write_dataset
from benchmarks.harnesses import MODEL
from benchmarks.load_cpu import export_src, locked
from benchmarks.measure import run_measured_together
from support.scripted_model import Entry, ScriptedModel, Step, serve

REPO = Path(__file__).resolve().parent.parent
AGENTS = ("basic", "claude_code", "codex_cli", "gemini_cli", "mini_swe_agent")
AGENTS_IMAGE = "inspect-gaia/sandbox:bookworm-agents"
EXIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def steps(agent: str, question: int, turns: int) -> list[Step]:
    """Question ``question``'s replies for ``agent``: ``turns`` shell calls, then the answer."""
    command = f"wc -l < /shared_files/{task_id(question)}.txt"
    # the count in the shell's output, as each agent's tool result shows it
    found = {
        "mini_swe_agent": r'"output": "(\d+)',
        "gemini_cli": r"Output: (\d+)",
        "codex_cli": r"Output:\s*(\d+)",
    }
    answer = {"answer_found": found.get(agent, r"(\d+)")}
    call: Step
    if agent == "basic":
        return [{"bash": command}] * turns + [{"submit_output": True}]
    if agent == "mini_swe_agent":  # every turn calls its bash tool; it ends on its exit command
        return [{"bash": command}] * turns + [{"bash": EXIT, **answer}]
    if agent == "claude_code":
        call = {"call": "Bash", "args": {"command": command, "description": "count lines"}}
    elif agent == "codex_cli":
        call = {"call": "exec_command", "args": {"cmd": command}}
    else:  # gemini_cli
        call = {"call": "run_shell_command", "args": {"command": command}}
    return [call] * turns + [answer]


def entries(agent: str, questions: int, turns: int) -> list[Entry]:
    """The scripted model's entries for ``agent`` on the first ``questions`` questions."""
    return [
        # the colon keeps "question 1:" from matching "question 12: ..."
        Entry(f"Benchmark question {i}:", steps(agent, i, turns))
        for i in range(questions)
    ]


def run_one(
    plan: Plan,
    model: ScriptedModel,
    url: str,
    dataset: Path,
    agent: str,
    variant: str,
    at_once: int,
    out: Path,
    lock: str | None,
) -> AgentRun:
    """One ``inspect eval`` of ``agent`` over ``at_once`` questions, all at once; measured."""
    turns = plan.turns[at_once]
    model.entries = entries(agent, at_once, turns)
    out.mkdir(parents=True, exist_ok=True)
    command = [
        *(str(Path(sys.executable).parent / "inspect"), "eval", "inspect_gaia/gaia"),
        *("-T", f"dataset_path={dataset}", "-T", f"image={plan.image}", "-T", f"agent={agent}"),
        *("--model", MODEL, "--max-samples", str(at_once), "--limit", str(at_once)),
        *("--log-dir", str(out), "--display", "none"),
    ]
    env = {**os.environ, "SCRIPTED_BASE_URL": url, "SCRIPTED_API_KEY": "bench"}
    src = plan.variants[variant]
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    poll = SandboxPoll(processes=plan.processes)
    with locked(lock):
        measured = run_measured_together([command], env, [out / "run.log"], sandbox_poll=poll)
    _check(out, at_once)
    boxes = poll.used()
    return AgentRun(
        agent=agent,
        variant=variant,
        at_once=at_once,
        turns=turns,
        measured=measured,
        sandbox_cpu=sum(box.cpu for box in boxes),
        memory=dict(memory_figures(boxes)),
        times=sample_times(out),
        cpu_groups=_summed([box.cpu_by_group() for box in boxes]) if plan.processes else {},
    )


def _summed(groups: list[dict[str, float]]) -> dict[str, float]:
    """Each group's seconds over the sandboxes."""
    return {name: sum(one.get(name, 0.0) for one in groups) for name in GROUPS}


def _check(out: Path, samples: int) -> None:
    """Every sample ran and was scored right (the scripted model always answers 20)."""
    from inspect_ai.log import read_eval_log

    (path,) = out.glob("*.eval")
    log = read_eval_log(str(path), header_only=True)
    if log.status != "success" or log.results is None:
        raise RuntimeError(f"{path}: status {log.status}: {log.error}")
    accuracy = log.results.scores[0].metrics["accuracy"].value
    if log.results.completed_samples != samples or accuracy != 1.0:
        raise RuntimeError(f"{path}: {log.results.completed_samples}/{samples}, {accuracy}")


def parse_args() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--agents", default=",".join(AGENTS))
    parser.add_argument("--levels", default="1,8,32", help="samples at once, each a run")
    parser.add_argument("--turns", type=int, default=3, help="shell calls per sample")
    parser.add_argument(
        "--top-turns", type=int, default=1, help="shell calls per sample at the top level"
    )
    parser.add_argument("--latency", type=float, default=2.0, help="s per model reply")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--image", default=AGENTS_IMAGE)
    parser.add_argument("--variant", action="append", default=[], help="NAME:GITREF")
    parser.add_argument("--quick", action="store_true", help="smoke test: 1 round at 1 and 2")
    parser.add_argument(
        "--processes",
        action="store_true",
        help="also split each sandbox's CPU by whose process used it (reads /proc every poll)",
    )
    parser.add_argument("--lock", help="hold an flock on this file during each run")
    parser.add_argument("--out", help="write the Markdown report here (default: print it)")
    parser.add_argument("--workdir", help="keep every run's logs here")
    return parser.parse_args()


def main() -> None:
    """Run every agent at every level, in turn, ``--rounds`` times; print or write the report."""
    args = parse_args()
    levels = (1, 2) if args.quick else tuple(int(n) for n in args.levels.split(","))
    turns = 1 if args.quick else args.turns
    top = max(levels)
    with tempfile.TemporaryDirectory(prefix="gaia-agents-") as temp:
        workdir = Path(args.workdir or temp)
        variants: dict[str, Path | None] = {"": export_src("", workdir)}
        for spec in args.variant:
            name, _, ref = spec.partition(":")
            variants[name] = export_src(ref, workdir)
        plan = Plan(
            agents=tuple(args.agents.split(",")),
            levels=levels,
            turns={n: (args.top_turns if n == top and len(levels) > 1 else turns) for n in levels},
            latency=0.5 if args.quick else args.latency,
            rounds=1 if args.quick else args.rounds,
            image=args.image,
            variants=variants,
            processes=args.processes,
        )
        dataset = write_dataset(workdir / "GAIA", top, top)
        started, begin = time.strftime("%Y-%m-%d %H:%M"), time.perf_counter()
        runs: list[AgentRun] = []
        model = ScriptedModel([], latency=plan.latency)
        with serve(model) as url:
            for round_ in range(plan.rounds):
                for level in plan.levels:
                    for agent in plan.agents:
                        for variant, src in plan.variants.items():
                            if not _knows(src, agent):
                                continue
                            name = f"{agent}{'-' + variant if variant else ''}"
                            print(f"round {round_ + 1}: {name}, {level} at once", flush=True)
                            out = workdir / f"{name}-{level}-{round_}"
                            runs.append(
                                run_one(
                                    plan, model, url, dataset, agent, variant, level, out, args.lock
                                )
                            )
        text = report(plan, runs, started, (time.perf_counter() - begin) / 60, sys.argv[1:])
        # every run's figures, to draw other tables from without running again
        (workdir / "runs.json").write_text(json.dumps([asdict(run) for run in runs], indent=1))
    if args.out:
        Path(args.out).write_text(text)
    print(text)


def _knows(src: Path | None, agent: str) -> bool:
    """Whether the source tree ``src`` offers ``agent`` (an older one may not)."""
    if src is None or agent == "basic":
        return True
    return any(agent in path.read_text() for path in src.glob("inspect_gaia/**/defaults.py"))


if __name__ == "__main__":
    main()
