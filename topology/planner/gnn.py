"""The planner's graph neural network (plain torch ops, no torch-geometric): it reads the joint
graph of :mod:`.features` and scores every option of every decision; the softmax of the scores per
decision is the prior of the tree search.

Architecture (12 961 parameters with the defaults):

1. encoders: one linear layer + SiLU for layer nodes, one for device nodes, to ``hidden`` wide;
2. ``rounds`` rounds of message passing with shared weights: a message
   ``silu(W_m·[h_src, e])`` per edge, averaged at the destination (``index_add_``), and a residual
   update ``h + tanh(W_u·[h, m̄])`` (each round moves a state by at most 1, so activations stay
   bounded without normalizing away magnitudes);
3. readout: mean and max over layer nodes and over device nodes (``4·hidden``);
4. option head: an MLP over ``[readout, one-hot decision, option features]`` → one logit.

Weights are stored as a plain ``.npz`` of float32 arrays plus a JSON metadata string, loaded with
``allow_pickle=False``: loading a weights file never runs code. The shipped file is
``stitchlab/topology/weights/planner_gnn.npz`` (see :mod:`.train`).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .features import DEVICE_FEATURES, EDGE_FEATURES, LAYER_FEATURES, JointGraph, build_graph
from .space import DECISIONS, N_OPTION_FEATURES, PlanError, SearchSpace

WEIGHTS_NAME = "planner_gnn.npz"
FORMAT = "stitchlab.planner-gnn/2"
#: share of the prior spread evenly, so that no option is ever ruled out
UNIFORM_MIX = 0.1


class PlannerGNN(nn.Module):
    """Message-passing network over the joint layer/device graph (see the module docstring)."""

    def __init__(self, hidden: int = 32, rounds: int = 3) -> None:
        super().__init__()
        self.hidden, self.rounds = hidden, rounds
        self.enc_layer = nn.Linear(LAYER_FEATURES, hidden)
        self.enc_device = nn.Linear(DEVICE_FEATURES, hidden)
        self.msg = nn.Linear(hidden + EDGE_FEATURES, hidden)
        self.upd = nn.Linear(2 * hidden, hidden)
        self.head1 = nn.Linear(4 * hidden + len(DECISIONS) + N_OPTION_FEATURES, 64)
        self.head2 = nn.Linear(64, 1)

    def forward(self, g: dict[str, torch.Tensor]) -> torch.Tensor:
        """Logits of all options (in the order of ``JointGraph.option_x``)."""
        act = torch.nn.functional.silu  # smooth: no unit can die, unlike ReLU
        h = torch.cat([act(self.enc_layer(g["layer_x"])), act(self.enc_device(g["device_x"]))])
        src, dst = g["src"], g["dst"]
        deg = torch.zeros(h.shape[0]).index_add_(0, dst, torch.ones(dst.shape[0]))
        deg = deg.clamp(min=1.0).unsqueeze(1)
        for _ in range(self.rounds):
            m = act(self.msg(torch.cat([h[src], g["edge_x"]], 1)))
            agg = torch.zeros_like(h).index_add_(0, dst, m) / deg
            h = h + torch.tanh(self.upd(torch.cat([h, agg], 1)))
        n_layers = g["layer_x"].shape[0]
        hl, hd = h[:n_layers], h[n_layers:]
        pooled = torch.cat([hl.mean(0), hl.max(0).values, hd.mean(0), hd.max(0).values])
        n_opt = g["option_x"].shape[0]
        dec = torch.nn.functional.one_hot(g["option_decision"], len(DECISIONS)).float()
        z = torch.cat([pooled.expand(n_opt, -1), dec, g["option_x"]], 1)
        return self.head2(act(self.head1(z))).squeeze(1)


def tensors(graph: JointGraph) -> dict[str, torch.Tensor]:
    """The graph's arrays as torch tensors."""
    return {k: torch.from_numpy(getattr(graph, k)) for k in
            ("layer_x", "device_x", "src", "dst", "edge_x", "option_x", "option_decision")}


def save(model: PlannerGNN, path: str | Path, meta: dict[str, Any] | None = None) -> None:
    """Write ``model`` as ``.npz`` (float32 arrays + a JSON metadata string; no pickle)."""
    info = {"format": FORMAT, "hidden": model.hidden, "rounds": model.rounds, **(meta or {})}
    arrays = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    with open(path, "wb") as fh:
        np.savez_compressed(fh, __meta__=np.array(json.dumps(info, sort_keys=True)), **arrays)


def load(path: str | Path | None = None) -> tuple[PlannerGNN, dict[str, Any]]:
    """Read weights written by :func:`save` (default: the shipped ones).

    Raises:
        PlanError: the file is missing or is not a planner weights file (names the path).
    """
    if path is None:
        ref = resources.files("stitchlab.topology").joinpath("weights", WEIGHTS_NAME)
        path = str(ref)
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["__meta__"]))
            arrays = {k: data[k] for k in data.files if k != "__meta__"}
    except FileNotFoundError:
        raise PlanError(f"GNN weights file {str(path)!r} does not exist; train one with "
                        "`stitchlab plan train --out FILE` or use prior='uniform'") from None
    except (ValueError, KeyError, OSError) as exc:
        raise PlanError(f"{str(path)!r} is not a planner weights file ({exc}); expected an .npz "
                        f"written by stitchlab.topology.planner.gnn.save") from None
    if meta.get("format") != FORMAT:
        raise PlanError(f"{str(path)!r} has format {meta.get('format')!r}; expected {FORMAT!r}")
    model = PlannerGNN(int(meta["hidden"]), int(meta["rounds"]))
    try:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in arrays.items()})
    except RuntimeError as exc:
        raise PlanError(f"weights in {str(path)!r} do not match the network: {exc}") from None
    model.eval()
    return model, meta


def probabilities(logits: np.ndarray, graph: JointGraph) -> list[np.ndarray]:
    """Per decision: softmax of its options' logits mixed with :data:`UNIFORM_MIX` uniform."""
    out = []
    for start, end in graph.option_slices:
        z = logits[start:end].astype(float)
        p = np.exp(z - z.max())
        p /= p.sum()
        out.append((1 - UNIFORM_MIX) * p + UNIFORM_MIX / len(p))
    return out


def prior(space: SearchSpace, model: PlannerGNN | None = None) -> list[np.ndarray]:
    """The GNN prior of ``space``'s decisions (default: the shipped weights)."""
    if model is None:
        model = _default_model()
    graph = build_graph(space)
    with torch.no_grad():
        logits = model(tensors(graph)).numpy()
    return probabilities(logits, graph)


_DEFAULT: PlannerGNN | None = None


def _default_model() -> PlannerGNN:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT, _ = load()
    return _DEFAULT
