"""Search over a :class:`~.space.SearchSpace`: Monte-Carlo tree search with a prior, and the
baselines it is measured against (random search, greedy coordinate descent, exhaustive search).

Every method is charged in *simulator calls*: distinct strategies simulated
(``space.sims``; a strategy seen before is a cache hit and free). Each returns a
:class:`SearchResult` with the best assignment and the trace of improvements, so the benchmark can
ask how many calls a method needed to reach a given plan quality.

MCTS (PUCT, as in AlphaZero): decisions are taken in the order of
:data:`~.space.DECISIONS`; a tree node is a prefix of choices. Selection maximises
``Q/Q_best + c·P·√N_parent/(1+N_child)`` where ``P`` is the prior (the GNN's, or uniform) and ``Q``
the mean value ``t_baseline / t`` of the simulations through that child; descent stops at the first
child never tried, the remaining decisions are sampled from the prior (the rollout) and the full
strategy is simulated. When ten iterations in a row produce only strategies already simulated (a
peaked prior on a small space), the prior used for selection and rollouts drifts toward uniform,
so the budget is still spent on new strategies.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .space import SearchSpace

Prior = Sequence[np.ndarray]
#: weight of the mean value in Q; the rest is the best value found below the child (the simulator
#: is deterministic, so a child's best leaf is a fact, not noise)
MEAN_WEIGHT = 0.5


@dataclass
class SearchResult:
    """Outcome of one search.

    Attributes:
        method: ``"mcts"``, ``"mcts+gnn"``, ``"random"``, ``"greedy"`` or ``"exhaustive"``.
        assignment: the best option index per decision.
        step_time: its simulated step time.
        sims: simulator calls used.
        trace: ``(sims, best step time)`` after every improvement, in order.
        sfb_override: SFB layers when the best point came from an explicit subset (exhaustive).
    """

    method: str
    assignment: tuple[int, ...]
    step_time: float
    sims: int
    trace: list[tuple[int, float]] = field(default_factory=list)
    sfb_override: list[str] | None = None

    def sims_to_reach(self, target_time: float) -> int | None:
        """Simulator calls until the best time was at most ``target_time`` (None: never)."""
        for sims, t in self.trace:
            if t <= target_time:
                return sims
        return None


class _Tracker:
    def __init__(self, space: SearchSpace, method: str) -> None:
        self.space = space
        self.start = space.sims
        self.best_t = math.inf
        self.best_a: tuple[int, ...] = space.baseline_assignment
        self.best_sfb: list[str] | None = None
        self.trace: list[tuple[int, float]] = []
        self.method = method

    @property
    def used(self) -> int:
        return self.space.sims - self.start

    def eval(self, assignment: tuple[int, ...], sfb: list[str] | None = None) -> float:
        t = self.space.evaluate(assignment, sfb).step_time
        if t < self.best_t:
            self.best_t, self.best_a, self.best_sfb = t, assignment, sfb
            self.trace.append((self.used, t))
        return t

    def result(self) -> SearchResult:
        return SearchResult(self.method, self.best_a, self.best_t, self.used, self.trace,
                            self.best_sfb)


def uniform_prior(space: SearchSpace) -> list[np.ndarray]:
    """Equal probability for every option of every decision."""
    return [np.full(len(d.options), 1.0 / len(d.options)) for d in space.decisions]


def mcts(space: SearchSpace, budget: int, prior: Prior | None = None, seed: int = 0,
         c_puct: float = 1.0, method: str | None = None) -> SearchResult:
    """Monte-Carlo tree search with ``budget`` simulator calls.

    Args:
        space: the problem.
        budget: simulator calls to spend (the baseline's call included).
        prior: per decision, a probability per option (default uniform).
        seed: seeds the rollouts; the same seed gives the same result.
        c_puct: exploration weight.
        method: name in the result (default ``"mcts"`` or ``"mcts+prior"``).
    """
    rng = np.random.default_rng(seed)
    sizes = [len(d.options) for d in space.decisions]
    probs = [np.asarray(p, dtype=float) / np.sum(p) for p in (prior or uniform_prior(space))]
    for d, p in zip(space.decisions, probs, strict=True):
        if len(p) != len(d.options):
            raise ValueError(f"prior for decision {d.key!r} has {len(p)} entries; it has "
                             f"{len(d.options)} options {d.labels()}")
    track = _Tracker(space, method or ("mcts" if prior is None else "mcts+prior"))
    t0 = track.eval(space.baseline_assignment)
    if not math.isfinite(t0):
        t0 = 1.0
    depth = len(sizes)
    stats: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    v_best = 1e-12
    iters = 0
    stale = 0  # iterations in a row that simulated nothing new
    uniform = [np.full(k, 1.0 / k) for k in sizes]
    while track.used < budget and iters < 50 * budget + 100:
        iters += 1
        eps = min(1.0, stale / 10)
        prefix: tuple[int, ...] = ()
        path = []
        while len(prefix) < depth:
            d = len(prefix)
            st = stats.get(prefix)
            if st is None:
                st = stats[prefix] = (np.zeros(sizes[d]), np.zeros(sizes[d]), np.zeros(sizes[d]))
            n, w, top = st
            # deterministic objective: blend the mean with the best value seen below the child
            q = np.where(n > 0, (MEAN_WEIGHT * w / np.maximum(n, 1)
                                 + (1 - MEAN_WEIGHT) * top) / v_best, 0.0)
            p_sel = probs[d] if stale < 10 else (1 - eps) * probs[d] + eps * uniform[d]
            u = c_puct * p_sel * math.sqrt(n.sum() + 1) / (1 + n)
            a = int(np.argmax(q + u + rng.random(sizes[d]) * 1e-9))
            path.append((prefix, a))
            prefix = prefix + (a,)
            if n[a] == 0:
                break
        # rollout: sample from the prior, drifting to uniform while nothing new comes out
        rest = tuple(int(rng.choice(sizes[d], p=(1 - eps) * probs[d] + eps * uniform[d]))
                     for d in range(len(prefix), depth))
        before = track.used
        t = track.eval(prefix + rest)
        stale = 0 if track.used > before else stale + 1
        v = t0 / t if math.isfinite(t) and t > 0 else 0.0
        v_best = max(v_best, v)
        for node, a in path:
            n, w, top = stats[node]
            n[a] += 1
            w[a] += v
            top[a] = max(top[a], v)
    return track.result()


def random_search(space: SearchSpace, budget: int, seed: int = 0) -> SearchResult:
    """Uniformly random assignments until ``budget`` simulator calls are spent."""
    rng = np.random.default_rng(seed)
    track = _Tracker(space, "random")
    track.eval(space.baseline_assignment)
    sizes = [len(d.options) for d in space.decisions]
    iters = 0
    while track.used < budget and iters < 20 * budget + 100:
        iters += 1
        track.eval(tuple(int(rng.integers(k)) for k in sizes))
    return track.result()


def greedy(space: SearchSpace, budget: int) -> SearchResult:
    """Coordinate descent from plain data parallelism: for each decision in turn keep its best
    option, repeated until nothing improves or the budget is spent."""
    track = _Tracker(space, "greedy")
    cur = list(space.baseline_assignment)
    best = track.eval(tuple(cur))
    improved = True
    while improved and track.used < budget:
        improved = False
        for k, d in enumerate(space.decisions):
            for o in range(len(d.options)):
                if track.used >= budget:
                    break
                cand = cur.copy()
                cand[k] = o
                t = track.eval(tuple(cand))
                if t < best * (1 - 1e-12):
                    best, cur, improved = t, cand, True
    return track.result()


def exhaustive(space: SearchSpace, sfb_subsets: bool = False, limit: int = 200_000) \
        -> SearchResult:
    """Every assignment; with ``sfb_subsets`` also every subset of the SFB candidate layers in
    place of the integer program's choice (a strictly larger space than the planner's).

    Raises:
        ValueError: more than ``limit`` points.
    """
    track = _Tracker(space, "exhaustive")
    sizes = [len(d.options) for d in space.decisions]
    cands = [ln.name for ln in space.sfb_candidates()]
    subsets: list[list[str]] = [[]]
    if sfb_subsets:
        subsets = [list(c) for r in range(len(cands) + 1) for c in itertools.combinations(cands, r)]
    total = math.prod(sizes) * len(subsets)
    if total > limit:
        raise ValueError(f"exhaustive search over {total} points exceeds limit={limit}; use a "
                         "smaller instance or raise the limit")
    sfb_k = [d.key for d in space.decisions].index("sfb")
    track.eval(space.baseline_assignment)
    for a in itertools.product(*[range(k) for k in sizes]):
        if sfb_subsets and a[sfb_k] == 1:
            for sub in subsets:
                track.eval(a, sub)
        else:
            track.eval(a)
    return track.result()


def prune_compression(space: SearchSpace, assignment: Sequence[int],
                      sfb: list[str] | None = None) -> tuple[list[str], float]:
    """Check each SFB layer of ``assignment`` in the simulator and drop those whose removal does
    not make the step slower (the integer program assumes all traffic is exposed; overlap with
    backward can hide it). Returns the kept SFB layers and the step time."""
    assignment = tuple(assignment)
    strategy = space.build(assignment, sfb)
    if strategy is None:
        return [], math.inf
    keep = sorted(n for n, s in strategy.schemes.items() if s == "sfb")
    best = space.evaluate(assignment, keep).step_time
    for name in list(keep):
        trial = [n for n in keep if n != name]
        t = space.evaluate(assignment, trial).step_time
        if t <= best:
            keep, best = trial, t
    return keep, best
