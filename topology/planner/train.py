"""Train the planner's GNN on simulator rollouts over generated topologies and models.

For each training case (:func:`~.cases.training_cases`: random clusters and models, never an
evaluation case) every assignment of the strategy space is simulated; for each decision and option
the target is the best step time reachable with that option (``t_o``), turned into a distribution
``softmax(-log(t_o / t_best) / τ)``. The network is fitted by cross-entropy to these targets with
Adam. Everything is seeded: the same seed gives the same weights file (on the same torch build).

Run::

    stitchlab plan train --seed 0 --out planner_gnn.npz
    python -m stitchlab.topology.planner.train --seed 0 --out planner_gnn.npz

A few minutes on 2 CPU cores with the defaults.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ProfileError
from .cases import training_cases
from .features import JointGraph, build_graph
from .space import SearchSpace

TAU = 0.1
MAX_SPACE = 3000


@dataclass
class Example:
    """One training case: its graph and the target distribution over each decision's options."""

    name: str
    graph: JointGraph
    targets: list[np.ndarray]


def rollout_targets(space: SearchSpace, tau: float = TAU) -> list[np.ndarray]:
    """Simulate every assignment of ``space``; per decision, the softmax target over options."""
    sizes = [len(d.options) for d in space.decisions]
    best = [np.full(k, math.inf) for k in sizes]
    for a in itertools.product(*[range(k) for k in sizes]):
        t = space.time(a)
        for d, o in enumerate(a):
            if t < best[d][o]:
                best[d][o] = t
    out = []
    for b in best:
        t_best = b.min()
        if not math.isfinite(t_best):
            out.append(np.full(len(b), 1.0 / len(b)))
            continue
        z = np.where(np.isfinite(b), -np.log(np.maximum(b, 1e-30) / t_best) / tau, -1e9)
        p = np.exp(z - z.max())
        out.append(p / p.sum())
    return out


def make_examples(seed: int, count: int, max_devices: int = 16,
                  log: bool = False) -> list[Example]:
    """``count`` examples from the seeded case generator (cases that do not fit are skipped)."""
    out: list[Example] = []
    gen = training_cases(seed, 10 * count, max_devices)
    for case in gen:
        if len(out) >= count:
            break
        try:
            space = SearchSpace(case.topo, case.profile)
        except ProfileError:
            continue
        if space.size() > MAX_SPACE or len(space.order) < 2:
            continue
        out.append(Example(case.name, build_graph(space), rollout_targets(space)))
        if log and len(out) % 20 == 0:
            print(f"  {len(out)}/{count} cases simulated", file=sys.stderr)
    return out


def fit(examples: Sequence[Example], seed: int = 0, epochs: int = 60, lr: float = 3e-3,
        hidden: int = 32, rounds: int = 3, log: bool = False):
    """Fit a :class:`~.gnn.PlannerGNN` to ``examples``; returns (model, final mean loss)."""
    import torch

    from .gnn import PlannerGNN, tensors

    torch.manual_seed(seed)
    model = PlannerGNN(hidden, rounds)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    data = [(tensors(e.graph),) + _padded(e) for e in examples]
    rng = np.random.default_rng(seed)
    loss_mean = math.nan
    for epoch in range(epochs):
        total = 0.0
        for i in rng.permutation(len(data)):
            g, index, pad, target = data[i]
            logits = model(g)[index] + pad
            loss = -(target * torch.log_softmax(logits, 1)).sum()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += float(loss.detach())
        loss_mean = total / max(len(data), 1)
        if log and (epoch % 5 == 0 or epoch == epochs - 1):
            print(f"  epoch {epoch:3d}: loss {loss_mean:.4f}", file=sys.stderr)
    model.eval()
    return model, loss_mean


def _padded(e: Example):
    """(index, pad, target) tensors laying the options out as decisions × max options, so the
    loss is one masked log-softmax."""
    import torch

    width = max(end - start for start, end in e.graph.option_slices)
    rows = len(e.graph.option_slices)
    index = np.zeros((rows, width), np.int64)
    pad = np.full((rows, width), -1e9, np.float32)
    target = np.zeros((rows, width), np.float32)
    for r, ((start, end), t) in enumerate(zip(e.graph.option_slices, e.targets, strict=True)):
        index[r, :end - start] = np.arange(start, end)
        pad[r, :end - start] = 0.0
        target[r, :end - start] = t
    return torch.from_numpy(index), torch.from_numpy(pad), torch.from_numpy(target)


def evaluate_loss(model, examples: Sequence[Example]) -> float:
    """Mean cross-entropy of ``model`` on ``examples`` (minus the targets' entropy: 0 is perfect)."""
    import torch

    from .gnn import tensors

    total = 0.0
    with torch.no_grad():
        for e in examples:
            logits = model(tensors(e.graph))
            for (s, t_end), t in zip(e.graph.option_slices, e.targets, strict=True):
                logp = torch.log_softmax(logits[s:t_end], 0).numpy()
                ent = -(t * np.log(np.maximum(t, 1e-30))).sum()
                total += float(-(t * logp).sum() - ent)
    return total / max(len(examples), 1)


def train(seed: int = 0, count: int = 400, epochs: int = 40, out: str | Path | None = None,
          log: bool = True) -> dict:
    """Generate rollouts, fit, and (with ``out``) save the weights. Returns a summary dict.

    Raises:
        ValueError: ``count`` < 2 (one case to fit and one held out) or ``epochs`` < 1: the
            weights would be untrained.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 2:
        raise ValueError(f"count={count!r} training cases: give at least 2 (one to fit, one held "
                         "out), e.g. --cases 400")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs={epochs!r}: give at least 1, e.g. --epochs 40")
    import torch

    from .gnn import save

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny graphs: one thread is fastest and keeps results reproducible
    try:
        t0 = time.perf_counter()
        if log:
            print(f"simulating {count} training cases (seed {seed})...", file=sys.stderr)
        examples = make_examples(seed, count, log=log)
        n_val = max(1, len(examples) // 8)
        train_set, val_set = examples[n_val:], examples[:n_val]
        t1 = time.perf_counter()
        if log:
            print(f"fitting on {len(train_set)} cases, {n_val} held out...", file=sys.stderr)
        model, loss = fit(train_set, seed, epochs, log=log)
        summary = {
            "seed": seed, "cases": len(examples), "train_cases": len(train_set),
            "val_cases": n_val, "epochs": epochs, "train_loss": round(loss, 5),
            "val_excess_loss": round(evaluate_loss(model, val_set), 5),
            "train_excess_loss": round(evaluate_loss(model, train_set), 5),
            "rollout_seconds": round(t1 - t0, 1),
            "fit_seconds": round(time.perf_counter() - t1, 1),
            "torch": torch.__version__,
        }
        if out is not None:
            save(model, out, {"training": summary})
            summary["out"] = str(out)
        return summary
    finally:
        torch.set_num_threads(threads)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="seed of cases and weights (default 0)")
    p.add_argument("--cases", type=int, default=400, help="training cases (default 400)")
    p.add_argument("--epochs", type=int, default=40, help="training epochs (default 40)")
    p.add_argument("--out", required=True, help="weights file to write (.npz)")


def run(args: argparse.Namespace) -> int:
    summary = train(args.seed, args.cases, args.epochs, args.out)
    for k, v in summary.items():
        print(f"{k:18s} {v}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stitchlab.topology.planner.train",
                                description="Train the planner GNN on simulator rollouts.")
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
