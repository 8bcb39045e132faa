"""Per-layer reducers the optimizer runs itself (everything else goes through Horovod's
``DistributedOptimizer``): SFB for linear layers, sparse rows for embeddings, and hierarchical
all-reduce over process sets.

Each reducer counts backward passes with a post-accumulate-grad hook on the layer's parameter
and starts its collectives when the last accumulated pass arrives, so communication overlaps the
rest of the backward pass. :meth:`finish` waits and writes the combined gradient into ``.grad``;
a rank that did not use the layer this step still joins the collectives (with zero rows), as
Horovod does for missing gradients.

All hooks are removable, so a new plan can replace the reducers between steps.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import horovod.torch as hvd
import torch
from torch import nn

from stitchlab.compression.sfb import LinearFactors, linear_grads
from stitchlab.compression.sparse import decode_rows, encode_rows


class _Reducer:
    """Common pass counting. Subclasses implement ``_launch`` and ``_complete``."""

    scheme = ""

    def __init__(
        self, name: str, anchor: nn.Parameter, passes_per_step: int, weight: float
    ) -> None:
        self.name = name
        self.passes_per_step = passes_per_step
        self.weight = weight  # this rank's share of the global batch
        self.passes = 0
        self.launched = False
        self.comm_seconds = 0.0  # time blocked in finish(), summed (read by the profiler)
        self._hooks = [anchor.register_post_accumulate_grad_hook(self._on_grad)]

    @property
    def pending(self) -> bool:
        return self.launched or self.passes > 0

    def _on_grad(self, _param: torch.Tensor) -> None:
        if self.passes >= self.passes_per_step:
            raise RuntimeError(
                f"layer {self.name!r} got more than backward_passes_per_step="
                f"{self.passes_per_step} backward passes before step(); raise "
                "backward_passes_per_step to accumulate gradients locally"
            )
        self.passes += 1
        if self.passes == self.passes_per_step:
            self._launch()
            self.launched = True

    def finish(self) -> None:
        """Wait for the collectives and write the combined gradient."""
        if not self.launched:
            self._launch()  # unused on this rank this step, or fewer passes than expected
        start = time.perf_counter()
        self._complete()
        self.comm_seconds += time.perf_counter() - start
        self.passes = 0
        self.launched = False

    def remove(self) -> None:
        for h in self._hooks:
            h.remove()
        self._hooks.clear()

    def _launch(self) -> None:
        raise NotImplementedError

    def _complete(self) -> None:
        raise NotImplementedError


def _set_grad(param: nn.Parameter, value: torch.Tensor) -> None:
    if param.grad is None or param.grad.is_sparse != value.is_sparse:
        param.grad = value
    else:
        param.grad.copy_(value)


class SFBReducer(_Reducer):
    """All-gathers a linear layer's input and weighted output gradient; rebuilds ``δᵀ·X``."""

    scheme = "sfb"

    def __init__(self, name: str, layer: nn.Linear, passes_per_step: int, weight: float) -> None:
        if not layer.weight.requires_grad:
            raise ValueError(f"SFB layer {name!r} has a frozen weight; use 'allreduce' for it")
        self.layer = layer
        self.factors = LinearFactors(layer)
        self.tokens = 0  # rows sent, summed over steps (read by the profiler)
        self._handles: tuple[int, int] | None = None
        self._stale: torch.Tensor | None = None  # whether .grad held a gradient before the step's first pass
        #: this pass's weight gradients from the layer's own calls (from autograd's nodes that
        #: feed the weight, found from each call's output): how many, the first, and from the
        #: second on their sum and the sum of their magnitudes; and whether a pass's whole
        #: gradient differed from them
        self._calls = 0
        self._own: tuple[torch.Tensor, ...] = ()
        self._outside: torch.Tensor | None = None
        super().__init__(name, layer.weight, passes_per_step, weight)
        self._hooks += [layer.weight.register_hook(self._before_accumulation),
                        layer.register_forward_hook(self._watch_own_path)]

    def _watch_own_path(self, _module: nn.Module, args: tuple, output: torch.Tensor) -> None:
        """Hook the autograd nodes through which this call's output reaches the weight (the
        transpose of ``F.linear``, autocast's cast), not looking past the call's input."""
        if not (torch.is_grad_enabled() and output.requires_grad):
            return
        w, stop = self.layer.weight, getattr(args[0], "grad_fn", None) if args else None
        frontier, seen = [output.grad_fn], set()
        for _ in range(6):  # (F.linear of a 3-d input: view, mm, transpose)
            deeper = []
            for node in frontier:
                if node is None or node is stop or node in seen:
                    continue
                seen.add(node)
                for k, (fn, _) in enumerate(node.next_functions):
                    if getattr(fn, "variable", None) is w:
                        node.register_hook(lambda grads, _outs, k=k: self._own_gradient(grads[k]))
                    elif fn is not None:
                        deeper.append(fn)
            frontier = deeper

    def _own_gradient(self, grad: torch.Tensor | None) -> None:
        if grad is None:
            return
        self._calls += 1
        if self._calls == 1:
            self._own = (grad,)
        elif self._calls == 2:
            (first,) = self._own
            self._own = (first + grad, first.abs() + grad.abs())
        else:
            self._own[0].add_(grad)
            self._own[1].add_(grad.abs())

    def _before_accumulation(self, grad: torch.Tensor) -> None:
        # a tensor hook runs before the gradient is added to .grad: a non-zero .grad at the
        # step's first pass is left from before (no zero_grad() since the last step), which the
        # rebuilt δᵀ·X would replace where Horovod's all-reduce keeps it (checked in _complete,
        # which waits for the device anyway)
        before = self.layer.weight.grad
        if self.passes == 0 and before is not None:
            self._stale = before.ne(0).any()
        # the pass's whole gradient against the layer's own calls': a weight also used outside
        # the forward (a penalty in the loss, F.linear(x, fc.weight)) adds a part SFB would drop.
        # One call: autograd hands its gradient on as it is; several: autograd sums them in
        # some order, within (calls) float epsilons of the sum of their magnitudes
        calls, own, self._calls, self._own = self._calls, self._own, 0, ()
        if calls == 0 or (calls == 1 and grad is own[0]):
            return  # (no node found: not checked)
        if calls == 1:
            differs = (grad != own[0]) & ~(grad.isnan() & own[0].isnan())
        else:
            total, magnitude = own
            differs = (grad - total).abs() > calls * torch.finfo(grad.dtype).eps * magnitude
        differs = differs.any()
        self._outside = differs if self._outside is None else self._outside | differs

    def _on_grad(self, param: torch.Tensor) -> None:
        if self.factors.rows == 0:
            # the output-gradient hook runs before the weight's gradient arrives, so a gradient
            # with no factors came from a use of the weight outside the layer's forward
            raise ValueError(
                f"SFB layer {self.name!r} got a weight gradient but no factors: its weight is "
                "used outside its forward (nn.MultiheadAttention's out_proj is, through "
                "F.multi_head_attention_forward), whose gradient SFB would drop; give "
                f"{self.name!r} 'allreduce'"
            )
        super()._on_grad(param)

    def _launch(self) -> None:
        x, dy = self.factors.take()
        self.tokens += int(x.shape[0])
        dy = dy * self.weight
        self._handles = (
            hvd.allgather_async(x.contiguous(), name=f"stitchlab.sfb.x.{self.name}"),
            hvd.allgather_async(dy.contiguous(), name=f"stitchlab.sfb.dy.{self.name}"),
        )

    def _complete(self) -> None:
        assert self._handles is not None
        x = hvd.synchronize(self._handles[0])
        dy = hvd.synchronize(self._handles[1])
        self._handles = None
        stale, self._stale = self._stale, None
        outside, self._outside = self._outside, None
        if outside is not None and bool(outside):
            raise ValueError(
                f"SFB layer {self.name!r}: its weight also got gradient from outside its forward "
                "(a penalty such as λ·weight.square().sum() in the loss, or F.linear(x, "
                f"{self.name}.weight)), which SFB would drop; give {self.name!r} 'allreduce', or "
                "use the optimizer's weight_decay for an L2 penalty"
            )
        if stale is not None and bool(stale):
            raise ValueError(
                f"SFB layer {self.name!r}: its weight's .grad held a gradient from before this "
                "step (no optimizer.zero_grad() since the last step()), which SFB would replace "
                "with this step's gradient where one process keeps adding to it; call zero_grad() "
                "before each step's backward (backward_passes_per_step accumulates passes)"
            )
        grad_w, grad_b = linear_grads(x, dy, bias=self.layer.bias is not None)
        _set_grad(self.layer.weight, grad_w)
        if self.layer.bias is not None and self.layer.bias.requires_grad:
            _set_grad(self.layer.bias, grad_b)

    def remove(self) -> None:
        super().remove()
        self.factors.remove()


class SparseReducer(_Reducer):
    """All-gathers an embedding's touched rows as (index, value) pairs and sums them."""

    scheme = "sparse"

    def __init__(self, name: str, layer: nn.Embedding, passes_per_step: int, weight: float) -> None:
        self.layer = layer
        self.rows = 0  # rows sent, summed over steps (read by the profiler)
        self._handles: tuple[int, int] | None = None
        self._sparse_grad = False
        super().__init__(name, layer.weight, passes_per_step, weight)

    def _launch(self) -> None:
        grad = self.layer.weight.grad
        if grad is None:
            w = self.layer.weight
            idx = torch.zeros(0, dtype=torch.int64, device=w.device)
            val = w.new_zeros((0, w.shape[1]))
        else:
            self._sparse_grad = grad.is_sparse
            # a dense gradient's non-zero rows, not the rows the forward looked up: a table also
            # used outside the embedding's forward (``h @ emb.weight.T``, a penalty term) has
            # gradient in rows it never looked up (one pass over the table, one device sync)
            idx, val = encode_rows(grad)
        self.rows += int(idx.numel())
        self._handles = (
            hvd.allgather_async(idx.contiguous(), name=f"stitchlab.sparse.idx.{self.name}"),
            hvd.allgather_async(
                (val * self.weight).contiguous(), name=f"stitchlab.sparse.val.{self.name}"
            ),
        )

    def _complete(self) -> None:
        assert self._handles is not None
        idx = hvd.synchronize(self._handles[0])
        val = hvd.synchronize(self._handles[1])
        self._handles = None
        dense = decode_rows([idx], [val], self.layer.num_embeddings)
        # nn.Embedding(sparse=True)'s layout: sparse rows of dense values (one sparse dimension)
        _set_grad(self.layer.weight, dense.to_sparse(1) if self._sparse_grad else dense)



class HierarchicalReducer(_Reducer):
    """Sums a layer's gradients inside its rank group first, then across groups.

    Both stages run in :meth:`finish`: stage one over the group's process set, stage two over the
    process set of the ranks holding the same position in every group.

    Stage two's sets complete independently, so ranks leave :meth:`finish` at different times.
    Before exiting, every rank must pass a global collective (``hvd.barrier()``): Horovod's
    shutdown at exit is agreed over the global set and aborts the operations still pending in
    other sets ("Horovod has been shut down" on the ranks still in stage two).
    """

    scheme = "hierarchical"

    def __init__(
        self,
        name: str,
        module: nn.Module,
        passes_per_step: int,
        weight: float,
        inner: hvd.ProcessSet,
        outer: hvd.ProcessSet,
    ) -> None:
        self.params = [p for p in module.parameters(recurse=False) if p.requires_grad]
        self.inner, self.outer = inner, outer
        super().__init__(name, self.params[0], passes_per_step, weight)

    def _launch(self) -> None:
        pass  # the layer's other parameters may still be accumulating: start in finish()

    def _complete(self) -> None:
        handles = []
        for i, p in enumerate(self.params):
            grad = p.grad if p.grad is not None else torch.zeros_like(p)
            handles.append(
                hvd.allreduce_async(
                    grad * self.weight,
                    name=f"stitchlab.hier.inner.{self.name}.{i}",
                    op=hvd.Sum,
                    process_set=self.inner,
                )
            )
        for i, (p, h) in enumerate(zip(self.params, handles, strict=True)):
            partial = hvd.synchronize(h)
            total = hvd.allreduce(
                partial,
                name=f"stitchlab.hier.outer.{self.name}.{i}",
                op=hvd.Sum,
                process_set=self.outer,
            )
            _set_grad(p, total)


def scale_hooks(params: list[nn.Parameter], factor: float) -> list[Callable[[], None]]:
    """Multiply every incoming gradient of ``params`` by ``factor`` (before accumulation).

    Returns the hooks' remove functions.
    """
    handles = [p.register_hook(lambda g, f=factor: g * f) for p in params]
    return [h.remove for h in handles]
