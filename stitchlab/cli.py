"""The ``stitchlab`` command (also ``python -m stitchlab``).

Subcommands: ``info``, ``demo``, and those that subpackages plug in (``registry``, ``plan``,
``topology``...): a module listed in ``_PLUGINS`` that exists offers ``register(subparsers)``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time
from collections.abc import Sequence

import numpy as np

_PLUGINS = (
    "stitchlab.registry.cli",
    "stitchlab.topology.cli",
    "stitchlab.compression.cli",
    "stitchlab.topology.plan_cli",
)


def _version(module: str) -> str:
    try:
        mod = importlib.import_module(module)
    except Exception as exc:  # a broken optional install must not break `info`
        return f"not available ({type(exc).__name__})"
    return getattr(mod, "__version__", "installed")


def cmd_info(args: argparse.Namespace) -> int:
    import stitchlab as sl
    from stitchlab.runtime import gpu_usable

    print(f"stitchlab  {sl.__version__}")
    print(f"python     {platform.python_version()} ({sys.executable})")
    print(f"numpy      {np.__version__}")
    print(f"cupy       {_version('cupy')}")
    from stitchlab.runtime import nvrtc

    version = nvrtc.version()
    note = ("  (before 13.4: kernels that compare integers compile without ptxas optimization; "
            "pip install 'nvidia-cuda-nvrtc>=13.4')") if nvrtc.ptxas_drops_negations(version) else ""
    print(f"nvrtc      {version}{note}")
    print(f"backend    {sl.get_backend()}  (STITCHLAB_BACKEND={os.environ.get('STITCHLAB_BACKEND', '')!s})")
    if gpu_usable():
        import cupy

        dev = cupy.cuda.Device()
        props = cupy.cuda.runtime.getDeviceProperties(dev.id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        print(f"gpu        {name} (sm_{dev.compute_capability}, {props['multiProcessorCount']} SMs)")
    else:
        print("gpu        none usable (the numpy backend runs everything on the CPU)")
    try:
        from stitchlab.registry import default_registry

        reg = default_registry().stats()
        print(f"registry   {reg.get('path')} ({reg.get('mode', '')}, {reg.get('entries', 0)} entries)")
    except Exception as exc:
        print(f"registry   unavailable ({exc})")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    import stitchlab as sl

    rows, cols = args.rows, args.cols
    rng = np.random.default_rng(0)
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    print(f"stitchlab demo on the {sl.get_backend()} backend: softmax and layernorm of a {rows}x{cols} float32 array\n")

    x = sl.asarray(a)
    e = sl.exp(x - x.max(axis=-1, keepdims=True))
    softmax = e / e.sum(axis=-1, keepdims=True)
    mu = x.mean(axis=-1, keepdims=True)
    layernorm = (x - mu) * sl.rsqrt(x.var(axis=-1, keepdims=True) + 1e-5)
    print(f"lazy graph built: softmax {softmax.shape} {softmax.dtype}, layernorm {layernorm.shape}")

    plan = sl.explain(softmax, layernorm)
    where = "launched on this GPU" if sl.get_backend() == "cupy" else (
        f"what the cupy backend would launch on {plan.device.name}; the numpy backend interprets the graph")
    print(f"fusion plan: {len(plan.kernels)} CUDA kernel(s) for both results ({where})")
    for k in plan.kernels:
        print(f"  {k.name}: {k.schedule}, {len(k.source.splitlines())} lines of CUDA C")

    t0 = time.perf_counter()
    s, ln = sl.compute(softmax, layernorm)
    dt = time.perf_counter() - t0
    s_np, ln_np = np.asarray(sl.asarray(s).get()), np.asarray(sl.asarray(ln).get())

    ref_e = np.exp(a - a.max(axis=-1, keepdims=True))
    ref_s = ref_e / ref_e.sum(axis=-1, keepdims=True)
    ref_ln = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
    print(f"computed in {dt * 1e3:.1f} ms; max |error| vs NumPy: softmax {np.abs(s_np - ref_s).max():.2e}, "
          f"layernorm {np.abs(ln_np - ref_ln).max():.2e}")
    print(f"softmax row sums: {s_np.sum(-1)[:4]}")
    print(f"counters: {sl.stats()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stitchlab", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("info", help="backend, GPU, versions and cache directory")
    p.set_defaults(func=cmd_info)
    p = sub.add_parser("demo", help="fused softmax and layernorm on the default backend")
    p.add_argument("--rows", type=int, default=1024)
    p.add_argument("--cols", type=int, default=1024)
    p.set_defaults(func=cmd_demo)
    for name in _PLUGINS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue  # that part is not there (yet)
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()
        return code
    except BrokenPipeError:  # `stitchlab registry show KEY | head -3`: the reader has gone
        # exit quietly, as other command lines do (128 + SIGPIPE); Python flushes stdout again at
        # exit, so point it at devnull first
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
