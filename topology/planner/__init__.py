"""stitchlab.topology.planner: the distributed data-parallel strategy planner.

The pipeline, one module per stage:

* :mod:`.space` — the strategy space (devices, batch shares, grouping, buckets, sparse, SFB) and
  the simulator cache every search is charged against;
* :mod:`.sfb` — SFB placement by the integer program of :mod:`stitchlab.compression.placement`;
* :mod:`.features` — the joint layer/device graph the GNN reads;
* :mod:`.gnn` — the message-passing network (torch, imported only when the GNN prior is used);
* :mod:`.search` — MCTS with a prior, and the baselines (random, greedy, exhaustive);
* :mod:`.planning` — :func:`plan`, the entry point;
* :mod:`.result`, :mod:`.view` — the :class:`Plan`, its JSON, text and notebook views;
* :mod:`.cases`, :mod:`.train` — generated problems, and training the GNN on simulator rollouts.

``import stitchlab.topology.planner`` does not import torch.

Example:
    >>> from stitchlab.topology.planner import plan
    >>> from stitchlab.topology.planner.cases import transformer_profile
    >>> p = plan("hetero-4fast-4slow-eth", transformer_profile(layers=2), budget=32)
    >>> p.speedup > 1
    True
"""

from .planning import PRIORS, plan, resolve_profile, resolve_topology
from .result import DecisionRecord, Plan
from .search import SearchResult, exhaustive, greedy, mcts, random_search
from .space import DECISIONS, Decision, Option, PlanError, SearchSpace

__all__ = [
    "DECISIONS", "PRIORS", "Decision", "DecisionRecord", "Option", "Plan", "PlanError",
    "SearchResult", "SearchSpace", "exhaustive", "greedy", "mcts", "plan", "random_search",
    "resolve_profile", "resolve_topology",
]
