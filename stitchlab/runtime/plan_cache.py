"""The plan cache: what the executable of a planned graph needs, kept in the kernel registry, so
that a new process runs a graph it has seen before without the plan search and code generation.

A *recipe* is plain JSON, written by :func:`lower` from a :class:`~stitchlab.plan.plan.Plan` whose
kernels are all compiled, and read back by :mod:`stitchlab.runtime.launch`::

    {"version": 1, "graph": <graph.key>, "nodes": <len(graph.nodes)>,
     "kernels": [{"name": "k_...", "key": <registry key of the cubin>,
                  "grid": [g, 1, 1], "block": [b, 1, 1], "shared_mem": 0,
                  "stores": [<graph positions of the buffers the kernel writes>],
                  "params": [["in", 0, "float32"], ["out", 5, "float32"], ["R", "int32", 64], ...]}],
     "outputs": [[<graph position of the buffer>, <shape to reshape it to, or null>], ...]}

A step run by the array library (``sl.explain``'s "interpreted": a matrix product, gather,
scan, sort, ``einsum``...) is an entry without CUDA code::

    {"name": "interpreted_7", "interpret": [<graph positions of its nodes>], "stores": [...]}

Parameters are ``[role, graph position, dtype]`` for buffers (``in``, ``out``) and
``[role, type, value]`` for everything else: sizes (``n``, ``blocks``, ``R``, ``K``, ``G``: the
scalar type and its value), workspaces (``ws``: dtype and element count, allocated per call) and
row counters (``counter``: ``uint32`` and element count, allocated once, zeroed).

A recipe is stored as the registry record ``plan/<name>`` where the name is a digest of the
graph's structural key, the device profile, the codegen version, the preamble digest, the NVRTC
version, the emitter switches and a digest of the compiler's own source files (so a changed
planner never reuses an old plan). The record also holds those components. On load it is
validated against the graph (:func:`validate`): anything that does not fit is ignored and the
graph is planned again, never trusted. Plans that run a group unfused because its kernel failed
to build are not cached (the next process tries again), and a plan the user picked in a notebook
(:func:`stitchlab.notebook.hooks.set_plan_override`) neither reads nor writes the cache.

A recipe is written to the registry as soon as its graph is planned (:func:`store`), so a process
that is killed (SIGKILL, out of memory, a Jupyter kernel restarted while hung) or crashes loses
none of its recipes. The write is one diskcache ``set`` per new graph (a SQLite transaction and a
small file: a median 0.2-0.5 ms on an ext4 disk, against 1.3-9 ms of planning) and atomic:
processes sharing a directory each see a complete record, the last one written (all are valid).
Executing a planned graph never writes. A registry that cannot be written (read-only, full)
degrades to memory with one warning and the computation goes on.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import math
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..ir.graph import Graph
from ..plan.device import DeviceProfile
from ..plan.plan import KernelPlan, Plan

#: Bump when the recipe format changes (2: steps run by the array library).
RECIPE_VERSION = 2
#: The registry record kind recipes are stored under.
RECORD_KIND = "plan"

log = logging.getLogger("stitchlab.runtime")

_BUFFER_ROLES = ("in", "out")
_SIZE_ROLES = {"n": ("int32", "int64"), "R": ("int32", "int64"), "K": ("int32", "int64"),
               "G": ("int32",), "blocks": ("int32",)}
_LIMITS = {"int32": 2**31 - 1, "int64": 2**63 - 1, "uint32": 2**32 - 1}
#: a split reduction's partial results (``schedules.workspace_entry``): the result's dtype
#: (float16 and bfloat16 accumulate in float32; argmax/argmin pairs are int64 words)
_WORKSPACE_DTYPES = frozenset({"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                               "float32", "float64"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}\Z")
_KEY = re.compile(r"[0-9a-f]{64}\Z")


_dtype_names: dict[np.dtype, str] = {}


def _name(dtype: np.dtype) -> str:
    """``dtype.name``, memoized (NumPy computes it in Python on each access)."""
    name = _dtype_names.get(dtype)
    if name is None:
        name = _dtype_names[dtype] = dtype.name
    return name


class RecipeError(ValueError):
    """A recipe does not fit the graph it is meant for (the message says where)."""


# --- from a plan ---------------------------------------------------------------------------------
def _itype(kernel: KernelPlan) -> str:
    return "int64" if kernel.schedule.index == "long long" else "int32"


def lower_kernel(kernel: KernelPlan, key: str, pos: dict[int, int]) -> dict[str, Any]:
    """The recipe entry of one compiled kernel.

    Args:
        kernel: a kernel of a plan, with CUDA source (``parts`` for a packed kernel).
        key: the registry key of its cubin.
        pos: ``id(node) -> position`` in the plan's graph.
    """
    from ..codegen.schedules import workspace_entry

    parts = kernel.parts or [kernel]
    infos = [part.info for part in parts]
    if any(i is None for i in infos):
        raise RecipeError(f"kernel {kernel.name} has no group information")
    info = infos[0]
    launch = kernel.launch
    R, K = info.rows, info.cols  # type: ignore[union-attr]
    itype = _itype(kernel)
    params: list[list[Any]] = []
    for p in kernel.params:
        if p.role in _BUFFER_ROLES:
            params.append([p.role, pos[id(p.node)], _name(p.node.dtype)])
        elif p.role == "n":
            part = parts[p.part]
            params.append(["n", _itype(part), math.prod(part.info.shape)])  # type: ignore[union-attr]
        elif p.role == "blocks":
            params.append(["blocks", "int32", parts[p.part].launch.grid[0]])
        elif p.role in ("R", "K"):
            params.append([p.role, itype, R if p.role == "R" else K])
        elif p.role == "G":
            params.append(["G", "int32", launch.split])
        elif p.role == "ws":
            dtype, per_partial = workspace_entry(p.node)
            params.append(["ws", _name(dtype), max(R * launch.split, 1) * per_partial])
        elif p.role == "counter":
            params.append(["counter", "uint32", max(R, 1)])
        else:
            raise RecipeError(f"kernel {kernel.name}: unknown parameter role {p.role!r}")
    return {
        "name": kernel.name,
        "key": key,
        "grid": [int(v) for v in launch.grid],
        "block": [int(v) for v in launch.block],
        "shared_mem": int(launch.shared_mem),
        "stores": [pos[id(n)] for i in infos for n, _ in i.outputs],  # type: ignore[union-attr]
        "params": params,
    }


def lower_interpreted(kernel: KernelPlan, pos: dict[int, int]) -> dict[str, Any]:
    """The recipe entry of a step the array library runs (a group of schedule "interpreted")."""
    info = kernel.info
    if info is None or kernel.schedule.family != "interpreted":
        raise RecipeError(f"{kernel.name} is not a step of the array library")
    return {"name": kernel.name, "interpret": [pos[id(n)] for n in info.members],
            "stores": [pos[id(n)] for n, _ in info.outputs]}


def outputs_of(plan: Plan) -> list[list[Any]]:
    """Per graph output: ``[position of the buffer, shape to reshape it to or None]``."""
    graph = plan.graph
    out: list[list[Any]] = []
    for k, node in enumerate(graph.outputs):
        if k in plan.views:
            base = graph.nodes[plan.views[k]]
            out.append([plan.views[k], list(node.shape) if base.shape != node.shape else None])
        else:
            out.append([graph.index(node), None])
    return out


def make_recipe(graph: Graph, kernels: list[dict[str, Any]], outputs: list[list[Any]]) -> dict[str, Any]:
    """A recipe from its kernel entries (:func:`lower_kernel`) and outputs (:func:`outputs_of`)."""
    return {"version": RECIPE_VERSION, "graph": graph.key, "nodes": len(graph.nodes),
            "kernels": kernels, "outputs": outputs}


def lower(plan: Plan, keys: list[str]) -> dict[str, Any]:
    """The recipe of ``plan``, whose kernels (all with CUDA source) have the registry ``keys``.

    (A step of the array library takes no key: its entry in ``keys`` is ignored.)

    Raises:
        RecipeError: if a kernel has no source and is not a step of the array library (it would
            run unfused: such plans are not cached).
    """
    graph = plan.graph
    if len(keys) != len(plan.kernels):
        raise RecipeError(f"{len(keys)} registry keys for {len(plan.kernels)} kernels")
    pos = {id(n): k for k, n in enumerate(graph.nodes)}
    kernels = []
    for kernel, key in zip(plan.kernels, keys, strict=True):
        if kernel.schedule.family == "interpreted" and kernel.error is None:
            kernels.append(lower_interpreted(kernel, pos))
            continue
        if not kernel.source or kernel.error is not None:
            raise RecipeError(f"kernel {kernel.name} has no CUDA code")
        kernels.append(lower_kernel(kernel, key, pos))
    return make_recipe(graph, kernels, outputs_of(plan))


# --- checking a recipe against its graph ---------------------------------------------------------
def _int(value: Any, what: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise RecipeError(f"{what} is {value!r}; expected an integer in [{low}, {high}]")
    return value


def _triple(value: Any, what: str, low: int) -> None:
    if not isinstance(value, list) or len(value) != 3:
        raise RecipeError(f"{what} is {value!r}; expected 3 integers")
    for k, v in enumerate(value):
        _int(v, f"{what}[{k}]", low, 2**31 - 1)


def validate(recipe: Any, graph: Graph) -> None:
    """Check that ``recipe`` describes an executable of ``graph``.

    Checked: the version, the graph's key and node count, every graph position in range, every
    buffer read before it is read (a graph input or stored by an earlier kernel) and stored once,
    each buffer parameter's dtype against its node, each kernel's outputs against its stores,
    launch dimensions, sizes within the graph's largest extent, each output's buffer (the output's
    node, or the node it reshapes) with its shape and dtype.

    Raises:
        RecipeError: naming the first thing that does not fit.
    """
    if not isinstance(recipe, dict):
        raise RecipeError(f"a recipe is a dict, got {type(recipe).__name__}")
    if recipe.get("version") != RECIPE_VERSION:
        raise RecipeError(f"recipe version {recipe.get('version')!r}, expected {RECIPE_VERSION}")
    if recipe.get("graph") != graph.key:
        raise RecipeError("the recipe is for another graph")
    nodes = graph.nodes
    if recipe.get("nodes") != len(nodes):
        raise RecipeError(f"the recipe counts {recipe.get('nodes')!r} nodes, the graph has {len(nodes)}")
    # sizes are products of some of a node's extents; of an empty array's, the non-zero ones
    # (x.sum(axis=0) of a (128, 0) array reduces K = 128 rows into no results)
    largest = max((math.prod(d for d in n.shape if d) for n in nodes), default=1)
    ready = {k for k, n in enumerate(nodes) if n.op == "input"}
    kernels = recipe.get("kernels")
    if not isinstance(kernels, list) or not kernels:
        raise RecipeError("the recipe has no kernels")
    last = len(nodes) - 1
    for k, kern in enumerate(kernels):
        where = f"kernel {k}"
        if not isinstance(kern, dict):
            raise RecipeError(f"{where} is not a dict")
        if not isinstance(kern.get("name"), str) or not _NAME.match(kern["name"]):
            raise RecipeError(f"{where}: name {kern.get('name')!r} is not a kernel name")
        if "interpret" in kern:
            ready.update(_validate_interpreted(kern, nodes, ready, where))
            continue
        if not isinstance(kern.get("key"), str) or not _KEY.match(kern["key"]):
            raise RecipeError(f"{where}: key {kern.get('key')!r} is not a registry key")
        _triple(kern.get("grid"), f"{where}: grid", 0)
        _triple(kern.get("block"), f"{where}: block", 1)
        if math.prod(kern["block"]) > 1024:
            raise RecipeError(f"{where}: block {kern['block']} has more than 1024 threads")
        _int(kern.get("shared_mem"), f"{where}: shared_mem", 0, 1 << 20)
        stores = kern.get("stores")
        if not isinstance(stores, list) or not stores:
            raise RecipeError(f"{where}: stores {stores!r} is not a list of graph positions")
        for s in stores:
            _int(s, f"{where}: stored position", 0, last)
            if s in ready:
                raise RecipeError(f"{where}: stores node {s}, which is an input or stored before")
        if len(set(stores)) != len(stores):
            raise RecipeError(f"{where}: stores a node twice")
        params = kern.get("params")
        if not isinstance(params, list):
            raise RecipeError(f"{where}: params is not a list")
        outs = []
        for j, p in enumerate(params):
            pw = f"{where}, parameter {j}"
            if not isinstance(p, list) or len(p) != 3 or not isinstance(p[0], str):
                raise RecipeError(f"{pw}: {p!r} is not [role, x, y]")
            role, a, b = p
            if role in _BUFFER_ROLES:
                _int(a, f"{pw}: position", 0, last)
                if role == "in" and a not in ready:
                    raise RecipeError(f"{pw}: reads node {a} before any kernel stores it")
                if role == "out":
                    if a not in stores:
                        raise RecipeError(f"{pw}: writes node {a}, which the kernel does not store")
                    outs.append(a)
                if b != _name(nodes[a].dtype):
                    raise RecipeError(f"{pw}: dtype {b!r}, node {a} is {nodes[a].dtype}")
            elif role in _SIZE_ROLES:
                if a not in _SIZE_ROLES[role]:
                    raise RecipeError(f"{pw}: {role} of type {a!r}")
                high = {"blocks": kern["grid"][0], "G": _LIMITS["int32"]}.get(role, largest)
                _int(b, f"{pw}: {role}", 1 if role == "G" else 0, min(high, _LIMITS[a]))
            elif role == "ws":
                if a not in _WORKSPACE_DTYPES:
                    raise RecipeError(f"{pw}: workspace dtype {a!r}")
                _int(b, f"{pw}: workspace size", 1, _LIMITS["int32"])
            elif role == "counter":
                if a != "uint32":
                    raise RecipeError(f"{pw}: counter dtype {a!r}")
                _int(b, f"{pw}: counter size", 1, largest + 1)
            else:
                raise RecipeError(f"{pw}: unknown role {role!r}")
        if sorted(outs) != sorted(stores):
            raise RecipeError(f"{where}: output parameters {outs} are not the stored nodes {stores}")
        ready.update(stores)
    outputs = recipe.get("outputs")
    if not isinstance(outputs, list) or len(outputs) != len(graph.outputs):
        raise RecipeError(f"the recipe has {outputs!r} for {len(graph.outputs)} outputs")
    for k, (entry, node) in enumerate(zip(outputs, graph.outputs, strict=True)):
        if not isinstance(entry, list) or len(entry) != 2:
            raise RecipeError(f"output {k}: {entry!r} is not [position, shape or null]")
        at, shape = entry
        _int(at, f"output {k}: position", 0, last)
        if at not in ready:
            raise RecipeError(f"output {k}: node {at} has no buffer")
        base = nodes[at]
        if base is not node and not (node.op == "reshape" and base is node.inputs[0]):
            raise RecipeError(f"output {k}: node {at} is neither the output nor the buffer it reshapes")
        if base.dtype != node.dtype:
            raise RecipeError(f"output {k}: buffer of dtype {base.dtype}, output is {node.dtype}")
        if shape is None:
            if base.shape != node.shape:
                raise RecipeError(f"output {k}: buffer of shape {base.shape}, output is {node.shape}")
        elif shape != list(node.shape) or math.prod(base.shape) != math.prod(node.shape):
            raise RecipeError(f"output {k}: reshape to {shape!r}, output is {node.shape}")


def _validate_interpreted(kern: dict[str, Any], nodes: list[Any], ready: set[int], where: str) -> list[int]:
    """Check a step of the array library (see :func:`validate`); its stored positions."""
    from ..plan.groups import FREE_OPS, LEAF_OPS

    if set(kern) != {"name", "interpret", "stores"}:
        raise RecipeError(f"{where}: an array-library step has the fields {sorted(kern)}")
    members, stores = kern["interpret"], kern["stores"]
    for what, positions in (("nodes", members), ("stores", stores)):
        if not isinstance(positions, list) or not positions or len(set(positions)) != len(positions):
            raise RecipeError(f"{where}: {what} {positions!r} is not a list of distinct graph positions")
        for p in positions:
            _int(p, f"{where}: {what[:-1]} position", 0, len(nodes) - 1)
    inside = set(members)
    if not set(stores) <= inside:
        raise RecipeError(f"{where}: stores {stores} are not among its nodes {members}")
    index = {id(n): i for i, n in enumerate(nodes)}
    for p in members:
        if nodes[p].op in LEAF_OPS or p in ready:
            raise RecipeError(f"{where}: node {p} ({nodes[p].op}) is an input or stored before")
        todo = list(nodes[p].inputs)
        while todo:  # what the step reads: buffers stored before, or views and constants of them
            n = todo.pop()
            i = index.get(id(n))
            if i is None:
                raise RecipeError(f"{where}: node {p} reads a node outside the graph")
            if i in ready or i in inside:
                continue
            if n.op in FREE_OPS or n.op in ("const", "iota"):
                todo.extend(n.inputs)
                continue
            raise RecipeError(f"{where}: node {p} reads node {i} before any step stores it")
    return stores


# --- in the registry -----------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def compiler_digest() -> str:
    """A digest of the source files that decide plans and kernels (ir, plan, codegen, the runtime's
    lowering, and kernels.py: the registry keys a recipe names and how they compile): a changed
    compiler never reuses a recipe of the old one."""
    root = Path(__file__).resolve().parents[1]
    files = [f for d in ("ir", "plan", "codegen") for f in sorted((root / d).glob("*.py"))]
    files += [root / "runtime" / "launch.py", root / "runtime" / "kernels.py", Path(__file__).resolve()]
    h = hashlib.sha256()
    for f in files:
        try:
            data = f.read_bytes()
        except OSError:
            data = b"(unreadable)"
        h.update(f"{f.relative_to(root).as_posix()}\n".encode())
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=8)
def _fixed_components(dev: DeviceProfile) -> tuple[tuple[str, str], ...]:
    from ..codegen.preamble import PREAMBLE_DIGEST
    from ..codegen.schedules import CODEGEN_VERSION
    from . import nvrtc

    return (
        ("device", json.dumps(dataclasses.asdict(dev), sort_keys=True)),
        ("codegen_version", CODEGEN_VERSION),
        ("header_digest", PREAMBLE_DIGEST),
        ("nvrtc_version", nvrtc.version()),
        ("compiler_digest", compiler_digest()),
        ("recipe_version", str(RECIPE_VERSION)),
    )


def components(graph_key: str, dev: DeviceProfile) -> dict[str, str]:
    """What a stored recipe depends on (kept in the record, hashed into its name)."""
    from ..codegen.schedules import OPTIONS
    from ..plan.groups import OPTIONS as PLANNER_OPTIONS

    comps = {"graph_key": graph_key, "emitter_options": json.dumps(OPTIONS, sort_keys=True),
             "planner_options": json.dumps(PLANNER_OPTIONS, sort_keys=True)}
    comps.update(_fixed_components(dev))
    return comps


def record_name(comps: dict[str, str]) -> str:
    """The record name of a recipe with these components (a SHA-256 hex digest)."""
    return hashlib.sha256(json.dumps(comps, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _registry() -> Any:
    from . import kernels

    return kernels.registry()


def overridden(graph_key: str) -> bool:
    """True if the user picked a candidate plan for this graph in a notebook (no plan cache then)."""
    try:
        from ..notebook.hooks import plan_override
    except ImportError:
        return False
    return plan_override(graph_key) is not None


#: Set once a recipe could not be written for a reason the registry does not handle itself.
_warned = False


def load(graph: Graph, dev: DeviceProfile) -> dict[str, Any] | None:
    """The stored recipe of ``graph`` on ``dev``, validated; None when there is none or it does not fit."""
    comps = components(graph.key, dev)
    name = record_name(comps)
    try:
        record = _registry().get_record(RECORD_KIND, name)
    except ValueError as error:  # a payload that is not JSON
        log.debug("plan cache: record %s unreadable (%s); planning again", name[:12], error)
        return None
    if record is None:
        return None
    try:
        if not isinstance(record, dict) or record.get("components") != comps:
            raise RecipeError("the record's components differ from the request")
        recipe = record.get("recipe")
        validate(recipe, graph)
    except RecipeError as error:
        log.debug("plan cache: record %s does not fit its graph (%s); planning again", name[:12], error)
        return None
    return recipe


def store(graph: Graph, dev: DeviceProfile, recipe: dict[str, Any]) -> None:
    """Keep ``recipe`` (for ``graph`` on ``dev``) in the registry (checked first, as on load).

    The record is written through to the disk at once, replacing any record of the same name (a
    damaged one, or the equal recipe of another process). It never raises: the registry degrades
    to memory with one warning when its directory cannot be written, and any other failure is
    reported by one warning per process (the graph is then planned again by the next process).
    """
    global _warned
    try:
        validate(recipe, graph)
    except RecipeError as error:
        log.debug("plan cache: not storing a recipe that does not fit its graph (%s)", error)
        return
    comps = components(graph.key, dev)
    name = record_name(comps)
    reg = _registry()
    try:
        reg.put_record(RECORD_KIND, name, {"components": comps, "recipe": recipe})
    except Exception as error:  # noqa: BLE001 - a lost recipe is only planned again
        log.debug("plan cache: recipe %s not written (%s)", name[:12], error)
        if not _warned:
            _warned = True
            warnings.warn(
                f"stitchlab plan cache: could not store the recipe {name[:12]} in {reg!r} "
                f"({type(error).__name__}: {error}); the computation goes on, but a new process "
                f"plans this graph again",
                RuntimeWarning,
                stacklevel=3,
            )


def flush() -> int:
    """Write the recipes not yet written; return how many.

    Recipes are written when they are stored, so there is never anything left: this returns 0.
    It remains for callers of the earlier version, which wrote recipes in batches at exit.
    """
    return 0
