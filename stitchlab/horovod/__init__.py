"""stitchlab.horovod: Horovod's ``DistributedOptimizer`` applying a stitchlab plan.

* :class:`DistributedOptimizer` — process sets and tensor groups from the plan, SFB for linear
  layers and sparse (index, value) all-gather for embeddings, uneven batch shares, gradient
  accumulation, ``skip_synchronize``, and re-planning after profiling the first steps;
* :func:`auto_strategy` — the cost model's plan (SFB where it pays, sparse for low-density
  embeddings);
* :class:`Profile`, :class:`PlanChange`, :class:`PlannerCallback` — the planner hooks.

Needs Horovod 0.28.1 built with PyTorch and Gloo (``make install`` builds it with
``scripts/install-horovod.sh``). ``import stitchlab`` never imports this package.
"""

try:
    import horovod.torch  # noqa: F401
except ImportError as _err:  # pragma: no cover - exercised where Horovod is missing
    raise ImportError(
        f"stitchlab.horovod needs Horovod 0.28.1 with PyTorch and Gloo, which cannot be imported "
        f"here ({_err}). Build it into this environment with `make install`, or run "
        f"`bash scripts/install-horovod.sh <venv>/bin/python` from the stitchlab repository "
        f"(about 2 minutes; needs a C++17 compiler)."
    ) from _err

from ._optimizer import DistributedOptimizer, default_planner
from ._plan import as_strategy, auto_strategy, check_strategy, even_strategy
from ._profile import LayerProfile, PlanChange, PlannerCallback, Profile

__all__ = [
    "DistributedOptimizer",
    "LayerProfile",
    "PlanChange",
    "PlannerCallback",
    "Profile",
    "as_strategy",
    "auto_strategy",
    "check_strategy",
    "default_planner",
    "even_strategy",
]
