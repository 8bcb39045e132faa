"""One process of ``test_plan_cache_gpu.py``: run a set of graphs through ``sl.jit`` on the GPU over
``$STITCHLAB_CACHE_DIR`` and save the results.

Usage: ``python plan_cache_child.py cold|warm OUT.npz``. ``warm`` makes planning and NVRTC raise,
so a warm process that would plan or compile fails instead of passing slowly. Prints one JSON line:
the counters of ``sl.stats()`` after the run.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys
from typing import Any

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def _workloads() -> Any:
    spec = importlib.util.spec_from_file_location("stitchlab_test_workloads", HERE.parent / "compiler" / "workloads.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _split_rows(y: Any) -> list[Any]:
    import stitchlab as sl

    y = sl.asarray(y)
    return [y / y.sum(axis=-1, keepdims=True), sl.logsumexp(y, axis=1)]


def _packed_and_view(a: Any, b: Any) -> list[Any]:
    import stitchlab as sl

    a, b = sl.asarray(a), sl.asarray(b)
    return [sl.exp(a) * 2, sl.sin(b) + 1, (a * 3).reshape(-1)]


def _library_steps(x: Any, w: Any) -> list[Any]:
    """Kernels around steps CuPy runs: a matrix product, a sort, a column argmax, a host-position
    gather and a scan (their recipes hold them since recipe version 2)."""
    import stitchlab as sl

    x, w = sl.asarray(x), sl.asarray(w)
    h = sl.tanh(x @ w + 1)
    return [h / sl.abs(h).sum(-1, keepdims=True), sl.sort(x * 2, axis=1) + 1, x.argmax(axis=0),
            sl.cumsum(x[[3, 0, -1]] * 0.5, axis=1)]


def cases() -> dict[str, tuple[Any, list[np.ndarray]]]:
    """name -> (function of the arrays, host arguments)."""
    wl = _workloads()
    out: dict[str, tuple[Any, list[np.ndarray]]] = {}
    for name in ("softmax", "layernorm", "add_layernorm", "adam", "column_norm", "elementwise_chain"):
        build, _, kinds = wl.WORKLOADS[name]
        args = wl.make_args(kinds, 257, 1024, seed=3)
        if name == "adam":
            args[3] = np.abs(args[3])
        out[name] = (build, args)
    rng = np.random.default_rng(4)
    out["split_rows"] = (_split_rows, [rng.standard_normal((3, 70000)).astype(np.float32)])
    out["packed_and_view"] = (_packed_and_view, [rng.standard_normal((7, 33)).astype(np.float32),
                                                 rng.standard_normal(100)])
    out["library_steps"] = (_library_steps, [rng.standard_normal((257, 1024)).astype(np.float32),
                                             (rng.standard_normal((1024, 32)) / 32).astype(np.float32)])
    return out


def main(argv: list[str]) -> int:
    mode, path = argv
    import cupy as cp

    import stitchlab as sl
    from stitchlab.codegen import program
    from stitchlab.runtime import nvrtc

    if mode == "warm":
        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a warm process planned a graph")

        def no_compile(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a warm process compiled a kernel")

        program.build_plan = refuse
        nvrtc.compile_cubin = no_compile
    sl.set_backend("cupy")
    results: dict[str, np.ndarray] = {}
    for name, (build, host) in cases().items():
        f = sl.jit(lambda *xs, build=build: tuple(build(*xs)))
        dev = [cp.asarray(a) for a in host]
        f(*dev)
        outs = f(*dev)  # the replayed call
        for k, o in enumerate(outs):
            results[f"{name}/{k}"] = o.get()
    np.savez(path, **results)
    print(json.dumps({k: int(v) for k, v in sl.stats().items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
