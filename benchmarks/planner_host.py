"""Host CPU seconds of planning long programs (no GPU needed): the plan search alone
(``stitchlab.plan.search.search``) and, with ``--build``, the whole plan with its kernels'
source (``stitchlab.codegen.program.build_plan``), on the H200 preset, with a digest of what
was planned (every candidate's groups and estimate, the chosen groups' recompute counts, and with
``--build`` the kernels' source) to compare two checkouts' plans.

    python3 benchmarks/planner_host.py [--build] [--rounds N] roll/57/256x256 rnn/1000 ...
    PYTHONPATH=/path/to/other/checkout python3 benchmarks/planner_host.py ...   # the same, old code

Programs (not evaluated; float32):

* ``roll/STEPS/RxC``: ``v + 0.1 * (roll(v, 1, 0) + roll(v, -1, 0) + roll(v, 1, 1) + roll(v, -1, 1) - 4 v)``
* ``pad/STEPS/RxC``: ``v + 0.1 * pad(v[:, 2:] - 2 v[:, 1:-1] + v[:, :-2], ((0, 0), (1, 1)))``
* ``rnn/STEPS``: ``h = tanh(h @ W + x[t])`` on 256 x 256, ``x`` one (STEPS, 256, 256) input
* ``ernn/STEPS``: ``h = tanh(h * W + x[t])`` on 256 x 256, each ``x[t]`` an input

Prints one JSON line per program and round: CPU seconds (``time.process_time``), kernels, digest.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import pathlib
import sys
import time
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # appended: a checkout on PYTHONPATH (or the installed one) stays first
    sys.path.append(str(ROOT))

import stitchlab as sl  # noqa: E402
from stitchlab.codegen.program import build_plan  # noqa: E402
from stitchlab.ir.graph import build_graph  # noqa: E402
from stitchlab.plan.device import preset  # noqa: E402
from stitchlab.plan.groups import GraphView  # noqa: E402

search_module = importlib.import_module("stitchlab.plan.search")  # (stitchlab.plan.search is the function)


def program(name: str) -> Any:
    """The lazy result of the program ``name`` (see the module docstring)."""
    kind, steps, *shape = name.split("/")
    rng = np.random.default_rng(0)
    if kind in ("roll", "pad"):
        v = sl.asarray(rng.standard_normal(tuple(int(s) for s in shape[0].split("x"))).astype(np.float32))
        for _ in range(int(steps)):
            if kind == "roll":
                v = v + 0.1 * (sl.roll(v, 1, 0) + sl.roll(v, -1, 0) + sl.roll(v, 1, 1) + sl.roll(v, -1, 1) - 4 * v)
            else:
                v = v + 0.1 * sl.pad(v[:, 2:] - 2 * v[:, 1:-1] + v[:, :-2], ((0, 0), (1, 1)))
        return v
    w = sl.asarray(rng.standard_normal((256, 256)).astype(np.float32))
    h = sl.asarray(np.zeros((256, 256), np.float32))
    if kind == "rnn":
        xs = sl.asarray(rng.standard_normal((int(steps), 256, 256)).astype(np.float32))
        for t in range(int(steps)):
            h = sl.tanh(h @ w + xs[t])
        return h
    if kind == "ernn":
        for _ in range(int(steps)):
            h = sl.tanh(h * w + sl.asarray(rng.standard_normal((256, 256)).astype(np.float32)))
        return h
    raise SystemExit(f"unknown program {name!r}: roll/STEPS/RxC, pad/STEPS/RxC, rnn/STEPS or ernn/STEPS")


def measure(name: str, build: bool) -> dict[str, Any]:
    dev = preset("H200")
    graph, _ = build_graph([program(name)._node])
    view = GraphView(graph)
    start = time.process_time()
    best, cands = search_module.search(view, dev)
    out: dict[str, Any] = {"program": name, "search_s": round(time.process_time() - start, 3), "kernels": len(best.groups)}
    pos = view.pos
    planned: list[Any] = [[(c.label, repr(c.cost), [sorted(pos[m] for m in g) for g in c.groups]) for c in cands],
                          [sorted(pos[m] for m in g) for g in best.groups],
                          [[(pos[i], k) for i, k in info.evaluated.items()] for info in search_module.group_infos(view, dev, best)]]
    if build:
        graph, _ = build_graph([program(name)._node])
        start = time.process_time()
        plan = build_plan(graph, dev)
        out["build_plan_s"] = round(time.process_time() - start, 3)
        planned.append([hashlib.sha256(k.source.encode()).hexdigest() for k in plan.kernels])
    out["digest"] = hashlib.sha256(json.dumps(planned).encode()).hexdigest()[:16]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("programs", nargs="+")
    parser.add_argument("--build", action="store_true", help="also time build_plan (the code generator too)")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    for _ in range(args.rounds):
        for name in args.programs:
            print(json.dumps(measure(name, args.build)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
