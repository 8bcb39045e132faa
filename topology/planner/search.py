"""Search over a :class:`~.space.SearchSpace`: Monte-Carlo tree search with a prior, the local
search that polishes its best strategy, and the baselines they are measured against (random
search, greedy coordinate descent, exhaustive search).

Every method is charged in *simulator calls*: distinct strategies simulated
(``space.sims``; a strategy seen before is a cache hit and free). Each returns a
:class:`SearchResult` with the best strategy and the trace of improvements, so the benchmark can
ask how many calls a method needed to reach a given plan quality.

MCTS (PUCT, as in AlphaZero): decisions are taken in the order of
:data:`~.space.DECISIONS`; a tree node is a prefix of choices. Selection maximises
``Q/Q_best + c·P·√N_parent/(1+N_child)`` where ``P`` is the prior (the GNN's, or uniform) and ``Q``
the mean value ``t_baseline / t`` of the simulations through that child; descent stops at the first
child never tried, the remaining decisions are sampled from the prior (the rollout) and the full
strategy is simulated. When ten iterations in a row produce only strategies already simulated (a
peaked prior on a small space), the prior used for selection and rollouts drifts toward uniform,
so the budget is still spent on new strategies.

Polish (``mcts(..., polish_share=POLISH_SHARE)``, what :func:`~.planning.plan` runs): the tree
stops a share of the budget early and its best strategy is improved by coordinate descent over the
alternatives :attr:`~.result.Plan.decisions` explains — every other option of every decision
(:func:`with_option`), every SFB or sparse layer switched back to all-reduce
(:func:`without_layer`) — moving to any the simulator finds faster (a layer also goes when its
removal costs nothing) until no single change helps. Calls the descent leaves go back to the tree,
which stops at its next improvement so that that one is polished in turn. Every call of the tree
and of the polish counts against the one budget.
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
#: share of the budget :func:`~.planning.plan` keeps back from the tree for the polish. What the
#: polish leaves goes back to the tree, so the share decides when the first polish runs, not how
#: many calls it takes. One round of the descent tries 13-21 other options on the evaluation
#: cases (plus one per compressed layer), most of them simulated by the tree already: the polish
#: used 2.3 new calls on average, at most 12. Measured on the 18 evaluation cases x 5 seeds
#: (runs at the exhaustive optimum, of 90, for shares 0 / 1/8 / 1/4 / 3/8): GNN prior at budget
#: 48: 88 / 90 / 90 / 90 (with no polish the 64-GPU heterogeneous case stays 10.4 % off for seed
#: 0); at 24: 77 / 82 / 86 / 84; at 16: 74 / 76 / 79 / 81; uniform prior at 24: 82 / 86 / 86 /
#: 87. A quarter is the best or close to it at every budget measured. Cut shorter, the tree more
#: often ends in a basin one change cannot leave (64-GPU heterogeneous case at budget 24: 9.6 %
#: off on average with 1/4, 12.2 % with 3/8); and the calls the polish takes can cost the tree a
#: find (8x-dgx-h100-ib/mlp at budget 24: 0.8 % off on average with 1/4, at the optimum without).
POLISH_SHARE = 0.25


@dataclass(frozen=True)
class Point:
    """A strategy as the searches name it.

    Attributes:
        assignment: one option index per decision.
        sfb: the SFB layers when they were chosen layer by layer (``None``: the integer program's
            choice for the assignment's ranks).
        sparse: the same for the sparse embedding layers (``None``: every embedding layer whose
            (index, value) rows are smaller than its dense all-reduce).
    """

    assignment: tuple[int, ...]
    sfb: tuple[str, ...] | None = None
    sparse: tuple[str, ...] | None = None


@dataclass
class SearchResult:
    """Outcome of one search.

    Attributes:
        method: ``"mcts"``, ``"mcts+gnn"``, ``"random"``, ``"greedy"`` or ``"exhaustive"``.
        assignment: the best option index per decision.
        step_time: its simulated step time.
        sims: simulator calls used (the polish's included).
        trace: ``(sims, best step time)`` after every improvement, in order.
        sfb_override: SFB layers when the best point chose them layer by layer (the polish, or an
            explicit subset in exhaustive search); ``None``: the integer program's.
        sparse_override: the same for sparse embedding layers.
        polish_sims: of ``sims``, the calls the polish made.
    """

    method: str
    assignment: tuple[int, ...]
    step_time: float
    sims: int
    trace: list[tuple[int, float]] = field(default_factory=list)
    sfb_override: list[str] | None = None
    sparse_override: list[str] | None = None
    polish_sims: int = 0

    @property
    def point(self) -> Point:
        """The best strategy as a :class:`Point`."""
        sfb = None if self.sfb_override is None else tuple(self.sfb_override)
        sparse = None if self.sparse_override is None else tuple(self.sparse_override)
        return Point(tuple(self.assignment), sfb, sparse)

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
        self.best = Point(space.baseline_assignment)
        self.trace: list[tuple[int, float]] = []
        self.method = method
        self.polish_sims = 0

    @property
    def used(self) -> int:
        return self.space.sims - self.start

    def eval(self, point: Point) -> float:
        t = self.space.evaluate(point.assignment, point.sfb, point.sparse).step_time
        if t < self.best_t:
            self.best_t, self.best = t, point
            self.trace.append((self.used, t))
        return t

    def result(self) -> SearchResult:
        b = self.best
        return SearchResult(self.method, b.assignment, self.best_t, self.used, self.trace,
                            None if b.sfb is None else list(b.sfb),
                            None if b.sparse is None else list(b.sparse), self.polish_sims)


def uniform_prior(space: SearchSpace) -> list[np.ndarray]:
    """Equal probability for every option of every decision."""
    return [np.full(len(d.options), 1.0 / len(d.options)) for d in space.decisions]


# ----------------------------------------------------------------------------- neighbours
def with_option(space: SearchSpace, point: Point, k: int, option: int) -> Point:
    """``point`` with decision ``k`` set to ``option``: the alternative the polish tries and
    :attr:`~.result.Plan.decisions` explains.

    Layers chosen one by one (``point.sfb``, ``point.sparse``) stay while their decision stays on
    and the ranks and shares stay; a change of ``devices`` or ``shares``, or of the scheme's own
    decision, goes back to the automatic choice for the new ranks.
    """
    a = list(point.assignment)
    a[k] = option
    keys = [d.key for d in space.decisions]
    changed = keys[k]
    same_ranks = changed not in ("devices", "shares")
    sfb = point.sfb if same_ranks and changed != "sfb" and a[keys.index("sfb")] else None
    sparse = point.sparse if same_ranks and changed != "sparse" and a[keys.index("sparse")] \
        else None
    return Point(tuple(a), sfb, sparse)


def compressed_layers(space: SearchSpace, point: Point, scheme: str) -> list[str]:
    """The layers that ``point``'s strategy sends by ``scheme`` (``"sfb"`` or ``"sparse"``)."""
    strategy = space.build(point.assignment, point.sfb, point.sparse)
    if strategy is None:
        return []
    return sorted(n for n, s in strategy.schemes.items() if s == scheme)


def without_layer(space: SearchSpace, point: Point, scheme: str, name: str) -> Point:
    """``point`` with layer ``name`` switched from ``scheme`` (``"sfb"`` or ``"sparse"``) back to
    all-reduce, every other layer's scheme kept as it is."""
    sfb = compressed_layers(space, point, "sfb")
    sparse = compressed_layers(space, point, "sparse")
    (sfb if scheme == "sfb" else sparse).remove(name)
    return Point(point.assignment, tuple(sfb), tuple(sparse))


def _option_order(space: SearchSpace, k: int, probs: Prior | None) -> list[int]:
    """Options of decision ``k`` in the order the descent tries them: index order without a prior;
    with one, the plain option first (the alternative a chosen option is explained against), then
    by falling prior probability (the likelier improvements first when the budget runs out)."""
    d = space.decisions[k]
    if probs is None:
        return list(range(len(d.options)))
    return sorted(range(len(d.options)), key=lambda o: (o != d.default, -float(probs[k][o]), o))


def _descend(track: _Tracker, start: Point, until: int, probs: Prior | None = None,
             polish: bool = True) -> Point:
    """Coordinate descent from ``start`` until a whole round changes nothing or ``until`` calls
    are used: each decision's options in turn, moving to any that is faster. The polish
    (``polish``) also takes a decision's plain option when it builds the very same strategy (a
    hierarchy over one group, SFB with no layer: the plan then reads as it is explained), and
    then switches each SFB and sparse layer back to all-reduce, kept off when that is not slower
    (fewer compressed layers for the same time). Returns where it stopped."""
    space = track.space
    cur = start
    best = track.eval(cur)
    moved = True
    while moved and track.used < until:
        moved = False
        for k, d in enumerate(space.decisions):
            for o in _option_order(space, k, probs):
                if track.used >= until:
                    return cur
                if o == cur.assignment[k]:
                    continue
                cand = with_option(space, cur, k, o)
                t = track.eval(cand)
                if t < best * (1 - 1e-12) or (polish and o == d.default and t == best
                                              and _same_strategy(space, cand, cur)):
                    cur, best, moved = cand, t, True
        if not polish:
            continue
        for scheme in ("sfb", "sparse"):
            for name in compressed_layers(space, cur, scheme):
                if track.used >= until:
                    return cur
                cand = without_layer(space, cur, scheme, name)
                t = track.eval(cand)
                if t <= best:
                    cur, best, moved = cand, t, True
    return cur


def _same_strategy(space: SearchSpace, a: Point, b: Point) -> bool:
    return space.build(a.assignment, a.sfb, a.sparse) == space.build(b.assignment, b.sfb, b.sparse)


def polish(space: SearchSpace, start: Point | Sequence[int], budget: int,
           prior: Prior | None = None) -> SearchResult:
    """Coordinate descent from ``start`` (a :class:`Point` or an assignment) with at most
    ``budget`` simulator calls: the polish step of :func:`mcts` on its own.

    Raises:
        ValueError: ``budget`` below 1 (the start itself may need a call).
    """
    if budget < 1:
        raise ValueError(f"budget={budget!r} must be at least one simulator call")
    if not isinstance(start, Point):
        start = Point(tuple(int(o) for o in start))
    track = _Tracker(space, "polish")
    _adopt(track, _descend(track, start, budget, prior))
    track.polish_sims = track.used
    return track.result()


def _adopt(track: _Tracker, end: Point) -> None:
    """Make the descent's end the best strategy when it is as fast (it dropped a compressed layer
    at equal time, or took a plain option that builds the same strategy; a faster one is the best
    already)."""
    if end != track.best and track.space.evaluate(end.assignment, end.sfb,
                                                  end.sparse).step_time <= track.best_t:
        track.best = end


# ----------------------------------------------------------------------------- MCTS
class _Tree:
    """One MCTS run, kept so that it can stop and resume (the polish takes turns with it)."""

    def __init__(self, track: _Tracker, probs: list[np.ndarray], seed: int, c_puct: float,
                 budget: int) -> None:
        self.track = track
        self.rng = np.random.default_rng(seed)
        self.sizes = [len(d.options) for d in track.space.decisions]
        self.probs = probs
        self.c_puct = c_puct
        self.uniform = [np.full(k, 1.0 / k) for k in self.sizes]
        self.stats: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.v_best = 1e-12
        self.iters = 0
        self.max_iters = 50 * budget + 100
        self.stale = 0  # iterations in a row that simulated nothing new
        t0 = track.eval(Point(track.space.baseline_assignment))
        self.t0 = t0 if math.isfinite(t0) else 1.0

    def run(self, until: int, stop_on_improvement: bool = False) -> bool:
        """Iterate until ``until`` calls are used, or (``stop_on_improvement``) until an
        iteration finds a better strategy. Returns ``False`` when the tree gives up: its
        iteration cap (a small space whose strategies are all simulated) is reached."""
        track = self.track
        while track.used < until:
            if self.iters >= self.max_iters:
                return False
            self.iters += 1
            before = track.best_t
            self._iterate()
            if stop_on_improvement and track.best_t < before:
                return True
        return True

    def _iterate(self) -> None:
        sizes, rng, track = self.sizes, self.rng, self.track
        depth = len(sizes)
        eps = min(1.0, self.stale / 10)
        prefix: tuple[int, ...] = ()
        path = []
        while len(prefix) < depth:
            d = len(prefix)
            st = self.stats.get(prefix)
            if st is None:
                st = self.stats[prefix] = (np.zeros(sizes[d]), np.zeros(sizes[d]),
                                           np.zeros(sizes[d]))
            n, w, top = st
            # deterministic objective: blend the mean with the best value seen below the child
            q = np.where(n > 0, (MEAN_WEIGHT * w / np.maximum(n, 1)
                                 + (1 - MEAN_WEIGHT) * top) / self.v_best, 0.0)
            p_sel = self.probs[d] if self.stale < 10 else \
                (1 - eps) * self.probs[d] + eps * self.uniform[d]
            u = self.c_puct * p_sel * math.sqrt(n.sum() + 1) / (1 + n)
            a = int(np.argmax(q + u + rng.random(sizes[d]) * 1e-9))
            path.append((prefix, a))
            prefix = prefix + (a,)
            if n[a] == 0:
                break
        # rollout: sample from the prior, drifting to uniform while nothing new comes out
        rest = tuple(int(rng.choice(sizes[d], p=(1 - eps) * self.probs[d] + eps * self.uniform[d]))
                     for d in range(len(prefix), depth))
        before = track.used
        t = track.eval(Point(prefix + rest))
        self.stale = 0 if track.used > before else self.stale + 1
        v = self.t0 / t if math.isfinite(t) and t > 0 else 0.0
        self.v_best = max(self.v_best, v)
        for node, a in path:
            n, w, top = self.stats[node]
            n[a] += 1
            w[a] += v
            top[a] = max(top[a], v)


def mcts(space: SearchSpace, budget: int, prior: Prior | None = None, seed: int = 0,
         c_puct: float = 1.0, method: str | None = None, polish_share: float = 0.0) -> SearchResult:
    """Monte-Carlo tree search with ``budget`` simulator calls, optionally polished.

    Args:
        space: the problem.
        budget: simulator calls to spend (the baseline's and the polish's included).
        prior: per decision, a probability per option (default uniform).
        seed: seeds the rollouts; the same seed gives the same result.
        c_puct: exploration weight.
        method: name in the result (default ``"mcts"`` or ``"mcts+prior"``).
        polish_share: share of the budget kept back from the tree for the local search that improves
            its best strategy (0: none, plain MCTS; :func:`~.planning.plan` uses
            :data:`POLISH_SHARE`). The tree stops ``floor(budget * polish_share)`` calls early, the
            descent runs, and any calls it leaves go back to the tree, whose next better strategy
            is polished in turn; the total never exceeds ``budget``.

    Raises:
        ValueError: a prior whose sizes do not match the decisions, or ``polish_share``
            outside [0, 1).
    """
    if not 0.0 <= polish_share < 1.0:
        raise ValueError(f"polish_share={polish_share!r} must be a share of the budget in [0, 1)")
    probs = [np.asarray(p, dtype=float) / np.sum(p) for p in (prior or uniform_prior(space))]
    for d, p in zip(space.decisions, probs, strict=True):
        if len(p) != len(d.options):
            raise ValueError(f"prior for decision {d.key!r} has {len(p)} entries; it has "
                             f"{len(d.options)} options {d.labels()}")
    track = _Tracker(space, method or ("mcts" if prior is None else "mcts+prior"))
    tree = _Tree(track, probs, seed, c_puct, budget)
    reserve = math.floor(budget * polish_share)
    tree.run(budget - reserve)
    if polish_share > 0:
        _polish_turns(track, tree, budget, probs)
    return track.result()


def _polish_turns(track: _Tracker, tree: _Tree, budget: int, probs: Prior) -> None:
    """Polish the best strategy; hand the calls left back to the tree, polish what it finds."""
    done: set[Point] = set()
    while track.used < budget:
        start = track.best
        if start in done:
            if not tree.run(budget, stop_on_improvement=True):
                return
            continue
        before = track.used
        end = _descend(track, start, budget, probs)
        track.polish_sims += track.used - before
        _adopt(track, end)
        done.update((start, end))


# ----------------------------------------------------------------------------- baselines
def random_search(space: SearchSpace, budget: int, seed: int = 0) -> SearchResult:
    """Uniformly random assignments until ``budget`` simulator calls are spent."""
    rng = np.random.default_rng(seed)
    track = _Tracker(space, "random")
    track.eval(Point(space.baseline_assignment))
    sizes = [len(d.options) for d in space.decisions]
    iters = 0
    while track.used < budget and iters < 20 * budget + 100:
        iters += 1
        track.eval(Point(tuple(int(rng.integers(k)) for k in sizes)))
    return track.result()


def greedy(space: SearchSpace, budget: int) -> SearchResult:
    """Coordinate descent from plain data parallelism: for each decision in turn keep its best
    option, repeated until nothing improves or the budget is spent."""
    track = _Tracker(space, "greedy")
    _descend(track, Point(space.baseline_assignment), budget, polish=False)
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
    subsets: list[tuple[str, ...]] = [()]
    if sfb_subsets:
        subsets = [c for r in range(len(cands) + 1) for c in itertools.combinations(cands, r)]
    total = math.prod(sizes) * len(subsets)
    if total > limit:
        raise ValueError(f"exhaustive search over {total} points exceeds limit={limit}; use a "
                         "smaller instance or raise the limit")
    sfb_k = [d.key for d in space.decisions].index("sfb")
    track.eval(Point(space.baseline_assignment))
    for a in itertools.product(*[range(k) for k in sizes]):
        if sfb_subsets and a[sfb_k] == 1:
            for sub in subsets:
                track.eval(Point(a, sub))
        else:
            track.eval(Point(a))
    return track.result()
