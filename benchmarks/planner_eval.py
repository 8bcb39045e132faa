"""Evaluation of the distributed strategy planner on the simulator (issue 7).

For every evaluation case (:func:`stitchlab.topology.planner.cases.eval_cases`; none of them is in
the GNN's training set) it measures, all on the same simulator:

* plain data parallel (all devices, even shares, ring all-reduce, no groups, under Horovod's
  own loop: 1 ms cycle, 128 MiB fusion, ``HOROVOD_DEFAULTS``) — the reference of every speed-up;
* the planner (:func:`stitchlab.topology.planner.plan`: MCTS with the GNN prior, SFB integer
  program, and the polish: coordinate descent from the tree's best, within the same budget);
* with the same budget of simulator calls: the planner's search (tree + polish,
  ``mcts(..., polish_share=POLISH_SHARE)``) with the GNN prior and without it (uniform), random
  search, greedy coordinate descent;
* exhaustive search over the decision space, and on the small cases also over every subset of the
  SFB candidate layers (a superset of what the planner can express);
* simulator calls until a plan within ``--quality`` of the exhaustive optimum is found, the
  planner's search with and without the GNN prior, over several seeds;
* what the polish buys: the tree search alone (``polish_share=0``) against the tree with the
  polish, with and without the prior, at each of ``--sweep-budgets`` simulator calls;
* wall time of planning the 64-device cases.

Run (about a quarter of an hour on 2 cores)::

    .venv/bin/python -m benchmarks.planner_eval --out benchmarks/results/planner_eval.json
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import math
import platform
import statistics
import subprocess
import sys
import time
from typing import Any

from stitchlab.topology.planner import SearchSpace, exhaustive, greedy, mcts, plan, random_search
from stitchlab.topology.planner.cases import Case, eval_cases
from stitchlab.topology.planner.search import POLISH_SHARE


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _all_devices_best(space: SearchSpace) -> float:
    """Best step time over the decision space with every device kept."""
    sizes = [len(d.options) for d in space.decisions]
    return min(space.time((0,) + rest)
               for rest in itertools.product(*[range(k) for k in sizes[1:]]))


def evaluate(budget: int, seeds: int, quality: float, quality_budget: int,
             sweep_budgets: list[int]) -> dict[str, Any]:
    from stitchlab.topology.planner import gnn

    model = gnn.load()[0]
    rows = []
    for case in eval_cases():
        t0 = time.perf_counter()
        p = plan(case.topo, case.profile, budget=budget, seed=0)
        plan_seconds = time.perf_counter() - t0
        base = p.baseline_time

        def fresh(case: Case = case) -> SearchSpace:
            return SearchSpace(case.topo, case.profile)

        ex_space = fresh()
        ex = exhaustive(ex_space)
        opt = ex.step_time
        all_dev = _all_devices_best(ex_space)
        p_all = plan(case.topo, case.profile, budget=budget, seed=0, all_devices=True,
                     explain=False)
        ex_sfb = None
        if case.small:
            ex_sfb = exhaustive(fresh(), sfb_subsets=True).step_time
        row: dict[str, Any] = {
            "case": case.name, "heterogeneous": case.heterogeneous, "small": case.small,
            "devices": len(case.topo.devices), "layers": len(case.profile.layers),
            "space_size": ex_space.size(), "distinct_strategies": ex.sims,
            "baseline_ms": base * 1e3, "plan_ms": p.step_time * 1e3, "plan_speedup": p.speedup,
            "plan_seconds": round(plan_seconds, 3), "plan_sims": p.search["simulator_calls"],
            "plan_polish_sims": p.search["polish_calls"],
            "plan_explain_sims": p.search["explain_calls"],
            "plan_world_size": p.world_size,
            "exhaustive_ms": opt * 1e3, "exhaustive_sfb_subsets_ms":
                None if ex_sfb is None else ex_sfb * 1e3,
            "all_devices_best_speedup": base / all_dev,
            "all_devices_plan_speedup": p_all.speedup,
        }
        space = fresh()
        pri = gnn.prior(space, model)
        methods: dict[str, list[float]] = {"mcts+gnn": [], "mcts": [], "random": []}
        reach: dict[str, list[int | None]] = {"mcts+gnn": [], "mcts": [], "mcts+gnn@opt": [],
                                              "mcts@opt": []}
        target = opt * (1 + quality)
        for seed in range(seeds):
            # the planner's search: the tree, then the polish, in one budget
            r = mcts(fresh(), budget, pri, seed, polish_share=POLISH_SHARE)
            methods["mcts+gnn"].append(r.step_time)
            methods["mcts"].append(
                mcts(fresh(), budget, None, seed, polish_share=POLISH_SHARE).step_time)
            methods["random"].append(random_search(fresh(), budget, seed).step_time)
            with_prior = mcts(fresh(), quality_budget, pri, seed, polish_share=POLISH_SHARE)
            without = mcts(fresh(), quality_budget, None, seed, polish_share=POLISH_SHARE)
            reach["mcts+gnn"].append(with_prior.sims_to_reach(target))
            reach["mcts"].append(without.sims_to_reach(target))
            reach["mcts+gnn@opt"].append(with_prior.sims_to_reach(opt * (1 + 1e-9)))
            reach["mcts@opt"].append(without.sims_to_reach(opt * (1 + 1e-9)))
        row["greedy_ms"] = greedy(fresh(), budget).step_time * 1e3
        # the tree alone against the tree + polish: step times per seed
        sweep: dict[str, dict[str, list[float]]] = {}
        for b in sweep_budgets:
            sweep[str(b)] = {
                f"{name}{' polished' if share else ''}": [
                    mcts(fresh(), b, prior, seed, polish_share=share).step_time * 1e3
                    for seed in range(seeds)]
                for name, prior in (("mcts+gnn", pri), ("mcts", None))
                for share in (0.0, POLISH_SHARE)}
        row["budget_sweep_ms"] = sweep
        for k, v in methods.items():
            row[f"{k}_ms_mean"] = statistics.fmean(v) * 1e3
        for k, v in reach.items():
            row[f"{k}_sims_to_quality"] = v
        rows.append(row)
        print(f"{case.name:36s} base {base * 1e3:8.2f} ms  plan {p.step_time * 1e3:8.3f} ms "
              f"x{p.speedup:6.2f}  exh {opt * 1e3:8.3f}  gnn-reach {reach['mcts+gnn']} "
              f"mcts-reach {reach['mcts']}  {plan_seconds:.1f}s", file=sys.stderr)
    return {"rows": rows}


def summarize(rows: list[dict[str, Any]], budget: int, quality_budget: int) -> dict[str, Any]:
    het = [r for r in rows if r["heterogeneous"]]
    small = [r for r in rows if r["small"]]
    big = [r for r in rows if r["devices"] >= 64]

    def reach_stats(key: str) -> dict[str, Any]:
        vals = [v for r in rows for v in r[key]]
        hit = [v for v in vals if v is not None]
        charged = [v if v is not None else quality_budget + 1 for v in vals]
        return {"runs": len(vals), "reached": len(hit), "mean_sims_charged": statistics.fmean(
            charged), "median_sims_charged": statistics.median(charged)}

    small_gap = [r["plan_ms"] / r["exhaustive_sfb_subsets_ms"] - 1 for r in small]
    return {
        "heterogeneous_cases": len(het),
        "geomean_speedup_heterogeneous": _geomean([r["plan_speedup"] for r in het]),
        "geomean_speedup_heterogeneous_all_devices_kept": _geomean(
            [r["all_devices_plan_speedup"] for r in het]),
        "geomean_speedup_heterogeneous_all_devices_kept_exhaustive": _geomean(
            [r["all_devices_best_speedup"] for r in het]),
        "min_speedup_all_cases": min(r["plan_speedup"] for r in rows),
        "small_cases_max_gap_to_exhaustive_sfb_subsets": max(small_gap) if small_gap else None,
        "all_cases_max_gap_to_exhaustive_decision_space": max(
            r["plan_ms"] / r["exhaustive_ms"] - 1 for r in rows),
        "sims_to_quality_mcts_gnn": reach_stats("mcts+gnn_sims_to_quality"),
        "sims_to_quality_mcts_uniform": reach_stats("mcts_sims_to_quality"),
        "sims_to_optimum_mcts_gnn": reach_stats("mcts+gnn@opt_sims_to_quality"),
        "sims_to_optimum_mcts_uniform": reach_stats("mcts@opt_sims_to_quality"),
        "plan_seconds_64_devices": {r["case"]: r["plan_seconds"] for r in big},
        "geomean_ratio_to_exhaustive": {
            m: _geomean([r[f"{m}_ms_mean" if m != "greedy" else "greedy_ms"]
                         / r["exhaustive_ms"] for r in rows])
            for m in ("mcts+gnn", "mcts", "random", "greedy")},
        "budget": budget,
        "polish_share": POLISH_SHARE,
        "budget_sweep": sweep_summary(rows),
    }


def sweep_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per sweep budget and search: geometric mean of step time over the exhaustive optimum, and
    how many runs (cases x seeds) end at the optimum and within 2 % of it."""
    out: dict[str, Any] = {}
    for b in sorted(rows[0]["budget_sweep_ms"], key=int):
        out[b] = {}
        for m in rows[0]["budget_sweep_ms"][b]:
            ratios = [t / r["exhaustive_ms"] for r in rows for t in r["budget_sweep_ms"][b][m]]
            out[b][m] = {"geomean_ratio_to_exhaustive": _geomean(ratios), "runs": len(ratios),
                         "at_optimum": sum(x <= 1 + 1e-9 for x in ratios),
                         "within_2_percent": sum(x <= 1.02 for x in ratios),
                         "worst_ratio": max(ratios)}
    return out


def markdown(res: dict[str, Any]) -> str:
    """The per-case table of ``docs/planner.md`` from a results dict."""
    head = ("| case | devices | baseline ms | plan ms | speed-up | plan, all devices kept | "
            "exhaustive ms | MCTS+GNN ms | MCTS ms | random ms | greedy ms | plan s |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in res["rows"]:
        lines.append(
            f"| {r['case']} | {r['devices']} | {r['baseline_ms']:.2f} | {r['plan_ms']:.3f} | "
            f"{r['plan_speedup']:.2f}x | {r['all_devices_plan_speedup']:.2f}x | "
            f"{r['exhaustive_ms']:.3f} | {r['mcts+gnn_ms_mean']:.3f} | {r['mcts_ms_mean']:.3f} | "
            f"{r['random_ms_mean']:.3f} | {r['greedy_ms']:.3f} | {r['plan_seconds']:.2f} |")
    return head + "\n".join(lines) + "\n" + sweep_markdown(res)


def sweep_markdown(res: dict[str, Any]) -> str:
    """The tree alone against the tree + polish, per budget, from a results dict."""
    sweep = res.get("summary", {}).get("budget_sweep") or {}
    if not sweep:
        return ""
    lines = ["", "| budget | search | runs at the optimum | within 2 % | geomean / optimum | worst |",
             "|---|---|---|---|---|---|"]
    for b in sorted(sweep, key=int):
        for m, v in sorted(sweep[b].items()):
            lines.append(f"| {b} | {m} | {v['at_optimum']}/{v['runs']} | "
                         f"{v['within_2_percent']}/{v['runs']} | "
                         f"{v['geomean_ratio_to_exhaustive']:.4f} | {v['worst_ratio']:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--budget", type=int, default=48, help="simulator calls per search")
    p.add_argument("--seeds", type=int, default=5, help="seeds of the randomized searches")
    p.add_argument("--quality", type=float, default=0.02,
                   help="plan quality: within this fraction of the exhaustive optimum")
    p.add_argument("--quality-budget", type=int, default=150,
                   help="simulator calls allowed when measuring calls-to-quality")
    p.add_argument("--sweep-budgets", default="16,24,48",
                   help="budgets at which the tree alone and the tree + polish are compared")
    p.add_argument("--out", default=None, help="write results JSON here")
    p.add_argument("--markdown", default=None,
                   help="print the table of an existing results JSON and exit")
    args = p.parse_args(argv)
    if args.markdown:
        with open(args.markdown, encoding="utf-8") as fh:
            print(markdown(json.load(fh)))
        return 0
    t0 = time.perf_counter()
    sweep = [int(b) for b in args.sweep_budgets.split(",") if b.strip()]
    res = evaluate(args.budget, args.seeds, args.quality, args.quality_budget, sweep)
    res["summary"] = summarize(res["rows"], args.budget, args.quality_budget)
    res["meta"] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(), "python": platform.python_version(),
        "machine": platform.machine(), "args": vars(args),
        "seconds": round(time.perf_counter() - t0, 1),
        "command": "python -m benchmarks.planner_eval " + " ".join(argv or sys.argv[1:]),
    }
    print(json.dumps(res["summary"], indent=2))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=1, sort_keys=True)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
