"""Model profiles: what the simulator and the planner know about a model.

A :class:`ModelProfile` lists the model's layers (modules that own parameters, in forward order)
with their parameter tensors, forward and backward time at the profile's batch size on the profile's
device, activation bytes kept for backward, the dimensions of linear layers and the rows (tokens)
per batch that Sufficient Factor Broadcasting needs, and the gradient density of embeddings.

Times scale linearly with the batch share and inversely with the device speed
(``profile.device_flops / device.flops``) when the simulator moves a layer to another device.

:meth:`ModelProfile.from_module` measures a torch module (torch imported only then); see
:mod:`stitchlab.topology._measure`.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ._schema import parse_json, read_json, validate, write_json
from .errors import DoesNotFitError, ProfileError

FORMAT = "stitchlab.profile/1"
#: The most elements one tensor dimension or parameter may have (2**48: a petabyte of float32,
#: more than any device holds); larger numbers overflow the float arithmetic of the cost models.
MAX_ELEMENTS = 2**48
LAYER_KINDS = ("linear", "embedding", "conv", "norm", "other")
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int64": 8, "int32": 4,
               "int8": 1, "uint8": 1, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1}


def _check_amount(what: str, value: Any) -> None:
    """A time, byte count, FLOP count or factor: a finite number >= 0 (JSON allows NaN and
    Infinity, which would otherwise pass every ``< 0`` check and poison the simulation)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 <= value < math.inf:
        raise ProfileError(f"{what} is {value!r}; it must be a finite number >= 0")


def _make(cls: type, fields: Any, what: str) -> Any:
    """``cls(**fields)`` for a dict read from JSON; wrong fields are a :class:`ProfileError`."""
    if not isinstance(fields, dict):
        raise ProfileError(f"{what} {fields!r} must be a {cls.__name__} or a dict of its fields")
    try:
        return cls(**fields)
    except TypeError as exc:  # an unknown or missing field
        reason = str(exc).split("() ", 1)[-1]  # "got an unexpected keyword argument 'x'"
        raise ProfileError(f"{what} {fields!r}: {reason}") from None


def _integral(value: Any) -> bool:
    """A whole number: an int, or a float such as 8.0 (JSON's integers may be written so)."""
    return (not isinstance(value, bool) and isinstance(value, numbers.Real)
            and math.isfinite(value) and value == int(value))


@dataclass(frozen=True)
class ParamInfo:
    """One parameter tensor: qualified name (``"encoder.0.weight"``), shape, dtype and whether it
    is trained (frozen parameters have no gradient to exchange and no optimizer state)."""

    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    trainable: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.shape, (str, bytes)) or not isinstance(self.shape, (list, tuple)) \
                or not all(_integral(s) for s in self.shape):
            raise ProfileError(f"parameter {self.name!r} has shape {self.shape!r}; give a list of "
                               "integer sizes, e.g. [256, 128]")
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))
        if any(s < 0 for s in self.shape) or self.numel > MAX_ELEMENTS:
            raise ProfileError(f"parameter {self.name!r} has shape {self.shape}; sizes must be "
                               f">= 0 and hold at most {MAX_ELEMENTS} (2**48) elements")
        if self.dtype not in DTYPE_BYTES:
            raise ProfileError(f"parameter {self.name!r} has unknown dtype {self.dtype!r}; "
                               f"expected one of {', '.join(DTYPE_BYTES)}")

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def nbytes(self) -> int:
        return self.numel * DTYPE_BYTES[self.dtype]


@dataclass
class LayerProfile:
    """One layer (a module owning parameters), times at the profile's batch size.

    Args:
        name: module qualified name (the key of ``Strategy.schemes``).
        kind: one of :data:`LAYER_KINDS`.
        params: its parameter tensors.
        forward_time, backward_time: seconds on the profile device. Time spent in parameter-free
            modules and functions between two layers is charged to the earlier one (forward) or
            the later one in backward order, so the sums equal the measured totals.
        activation_bytes: bytes this layer keeps for backward (its output), at the profile batch.
        forward_flops: FLOPs of the forward pass (backward taken as 2×) when known.
        in_features, out_features: a linear layer's m and n (the weight is n×m).
        tokens: rows of the linear layer's input X per batch (batch × sequence), SFB's ``b``.
        num_embeddings, embedding_dim: an embedding's table shape.
        grad_density: fraction of embedding rows with a nonzero gradient per batch.
    """

    name: str
    kind: str = "other"
    params: list[ParamInfo] = field(default_factory=list)
    forward_time: float = 0.0
    backward_time: float = 0.0
    activation_bytes: int = 0
    forward_flops: float = 0.0
    in_features: int | None = None
    out_features: int | None = None
    tokens: int | None = None
    num_embeddings: int | None = None
    embedding_dim: int | None = None
    grad_density: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in LAYER_KINDS:
            raise ProfileError(f"layer {self.name!r} has unknown kind {self.kind!r}; "
                               f"expected one of {', '.join(LAYER_KINDS)}")
        self.params = [p if isinstance(p, ParamInfo) else _make(ParamInfo, p, f"layer "
                       f"{self.name!r} parameter") for p in self.params]
        for attr in ("forward_time", "backward_time", "activation_bytes", "forward_flops"):
            _check_amount(f"layer {self.name!r} {attr}", getattr(self, attr))
        if self.grad_density is not None and not 0 <= self.grad_density <= 1:
            raise ProfileError(f"layer {self.name!r} grad_density {self.grad_density!r} must be "
                               "in [0, 1]")
        for attr in ("in_features", "out_features", "tokens", "num_embeddings", "embedding_dim"):
            value = getattr(self, attr)
            if value is not None and (not _integral(value) or not 0 <= value <= MAX_ELEMENTS):
                raise ProfileError(f"layer {self.name!r} {attr} is {value!r}; it must be an "
                                   f"integer from 0 to {MAX_ELEMENTS} (2**48), or null")
        dims = {"linear": ("out_features", "in_features"),
                "embedding": ("num_embeddings", "embedding_dim")}.get(self.kind)
        matrices = [p for p in self.params if len(p.shape) == 2]
        if dims and matrices and None not in (getattr(self, dims[0]), getattr(self, dims[1])):
            want = (getattr(self, dims[0]), getattr(self, dims[1]))
            if matrices[0].shape != want:
                raise ProfileError(
                    f"layer {self.name!r} says {dims[0]}={want[0]}, {dims[1]}={want[1]} but its "
                    f"weight {matrices[0].name!r} has shape {matrices[0].shape}; they must agree "
                    f"(the weight is {dims[0]} x {dims[1]})")

    @property
    def param_bytes(self) -> int:
        return sum(p.nbytes for p in self.params)

    @property
    def trainable_bytes(self) -> int:
        return sum(p.nbytes for p in self.params if p.trainable)

    @property
    def itemsize(self) -> int:
        return DTYPE_BYTES[self.params[0].dtype] if self.params else 4


@dataclass
class ModelProfile:
    """Per-layer profile of a model at ``batch_size`` samples on a device of ``device_flops``.

    Args:
        name: the model's name (its class name by default).
        batch_size: samples per step the times were taken at.
        device: where it was measured (``"cpu"``, ``"NVIDIA H200"``).
        device_flops: that device's speed in FLOP/s (the same measure as ``Device.flops``).
        layers: in forward order (measured profiles: reverse order of gradient readiness, which is
            forward order for a sequential model).
        optimizer_time: seconds of one optimizer step on that device.
        optimizer_state_factor: optimizer state bytes per parameter byte (Adam: 2, SGD with
            momentum: 1, plain SGD: 0).
        method: ``"measured"`` (hooks on the real device) or ``"estimated"`` (FLOPs / speed).
    """

    name: str
    batch_size: int
    device: str
    device_flops: float
    layers: list[LayerProfile]
    optimizer_time: float = 0.0
    optimizer_state_factor: float = 2.0
    method: str = "measured"

    def __post_init__(self) -> None:
        if not isinstance(self.layers, (list, tuple)):
            raise ProfileError(f"profile layers {self.layers!r} must be a list of LayerProfile")
        self.layers = [ln if isinstance(ln, LayerProfile) else _make(LayerProfile, ln, "layer")
                       for ln in self.layers]
        if not _integral(self.batch_size) or self.batch_size <= 0:
            raise ProfileError(f"profile batch_size {self.batch_size!r} must be a positive integer")
        _check_amount("profile device_flops", self.device_flops)
        if not self.device_flops > 0:
            raise ProfileError(f"profile device_flops {self.device_flops!r} must be positive")
        _check_amount("profile optimizer_time", self.optimizer_time)
        _check_amount("profile optimizer_state_factor", self.optimizer_state_factor)
        seen: dict[str, str] = {}
        names: set[str] = set()
        for layer in self.layers:
            if layer.name in names:
                raise ProfileError(f"layer name {layer.name!r} appears twice; layer names are "
                                   "module names and must be unique")
            names.add(layer.name)
            for p in layer.params:
                if p.name in seen:
                    raise ProfileError(f"parameter {p.name!r} appears in layers {seen[p.name]!r} "
                                       f"and {layer.name!r}; list a shared parameter once")
                seen[p.name] = layer.name
        self._owner = seen
        self._by_name = {layer.name: layer for layer in self.layers}

    # ----------------------------------------------------------------- queries
    def layer(self, name: str) -> LayerProfile:
        hit = self._by_name.get(name)
        if hit is not None:
            return hit
        for layer in self.layers:  # layers added after construction
            if layer.name == name:
                return layer
        raise ProfileError(f"unknown layer {name!r}; the profile has "
                           f"{', '.join(ln.name for ln in self.layers[:8])}"
                           f"{', ...' if len(self.layers) > 8 else ''}")

    def owner(self, param: str) -> str:
        """The layer a parameter belongs to."""
        try:
            return self._owner[param]
        except KeyError:
            names = list(self._owner)
            raise ProfileError(f"unknown parameter {param!r}; the profile has "
                               f"{', '.join(names[:6])}{', ...' if len(names) > 6 else ''}") \
                from None

    @property
    def param_bytes(self) -> int:
        return sum(ln.param_bytes for ln in self.layers)

    @property
    def trainable_bytes(self) -> int:
        return sum(ln.trainable_bytes for ln in self.layers)

    @property
    def static_bytes(self) -> float:
        """Bytes a replica holds whatever its batch: the weights, and gradients and optimizer
        state of the trained ones (:meth:`memory_needed` less the activations)."""
        return self.param_bytes + float(self.trainable_bytes) * (1 + self.optimizer_state_factor)

    @property
    def activation_bytes(self) -> int:
        return sum(ln.activation_bytes for ln in self.layers)

    @property
    def forward_time(self) -> float:
        return sum(ln.forward_time for ln in self.layers)

    @property
    def backward_time(self) -> float:
        return sum(ln.backward_time for ln in self.layers)

    def matmul_efficiency(self) -> float:
        """Achieved fraction of ``device_flops`` in the linear layers' forward passes (1.0 when
        the profile has no timed linear layers): the simulator charges extra matrix products
        (SFB's gradient rebuild) at this fraction of a device's speed."""
        flops = sum(ln.forward_flops for ln in self.layers if ln.kind == "linear")
        seconds = sum(ln.forward_time for ln in self.layers if ln.kind == "linear")
        if flops <= 0 or seconds <= 0:
            return 1.0
        return min(1.0, flops / seconds / self.device_flops)

    def memory_needed(self, batch: float) -> dict[str, float]:
        """Bytes a data-parallel replica needs at ``batch`` samples, by category."""
        weights = float(self.param_bytes)
        trained = float(self.trainable_bytes)
        return {
            "weights": weights,
            "gradients": trained,
            "optimizer": trained * self.optimizer_state_factor,
            "activations": self.activation_bytes * batch / self.batch_size,
        }

    def check_fits(self, topo: Any, batch_shares: dict[str, float] | None = None) -> None:
        """Raise :class:`DoesNotFitError` if a device of ``topo`` cannot hold a replica.

        Args:
            topo: a DeviceTopology.
            batch_shares: samples per device id (default: ``batch_size`` on every device).
        """
        for dev in topo.devices:
            batch = self.batch_size if batch_shares is None else batch_shares.get(dev.id, 0)
            if batch_shares is not None and dev.id not in batch_shares:
                continue
            need = self.memory_needed(batch)
            total = sum(need.values())
            if total > dev.memory:
                parts = ", ".join(f"{k} {v / 2**30:.2f}" for k, v in need.items())
                raise DoesNotFitError(
                    f"model {self.name!r} needs {total / 2**30:.2f} GiB ({parts}) at batch "
                    f"{batch:g} but device {dev.id!r} has {dev.memory / 2**30:.2f} GiB; use a "
                    "smaller batch share, fewer optimizer states or a larger device"
                )

    # ----------------------------------------------------------------- serialization
    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["format"] = FORMAT
        for layer in data["layers"]:
            for p in layer["params"]:
                p["shape"] = list(p["shape"])
        return data

    @classmethod
    def from_dict(cls, data: Any, source: str | None = None) -> ModelProfile:
        validate(data, SCHEMA, source)
        data = dict(data)
        data.pop("format")
        return cls(**data)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str, source: str | None = None) -> ModelProfile:
        return cls.from_dict(parse_json(text, source), source)

    def save(self, path: str | Path) -> None:
        write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> ModelProfile:
        return cls.from_dict(read_json(path), str(path))

    @classmethod
    def from_module(cls, model: Any, sample_input: Any, device: Any = None, steps: int = 3,
                    estimate: bool = False, **kwargs: Any) -> ModelProfile:
        """Profile a torch ``nn.Module``; see :func:`stitchlab.topology._measure.profile_module`
        for the arguments."""
        from ._measure import profile_module

        return profile_module(model, sample_input, device=device, steps=steps,
                              estimate=estimate, **kwargs)

    def summary(self) -> str:
        lines = [f"{self.name}: {len(self.layers)} layers, {self.param_bytes / 2**20:.1f} MiB "
                 f"of parameters, batch {self.batch_size} on {self.device} ({self.method}): "
                 f"forward {self.forward_time * 1e3:.2f} ms, backward "
                 f"{self.backward_time * 1e3:.2f} ms"]
        for ln in self.layers:
            extra = ""
            if ln.in_features:
                extra = f" m={ln.in_features} n={ln.out_features} b={ln.tokens}"
            if ln.grad_density is not None:
                extra = f" density={ln.grad_density:.3f}"
            lines.append(f"  {ln.name:30s} {ln.kind:9s} {ln.param_bytes / 2**20:8.2f} MiB "
                         f"fwd {ln.forward_time * 1e3:7.3f} ms bwd {ln.backward_time * 1e3:7.3f} ms"
                         f"{extra}")
        return "\n".join(lines)


_NONNEG = {"type": "number", "minimum": 0}
_OPT_INT = {"type": ["integer", "null"], "minimum": 0}
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://stitchlab.dev/schemas/profile-1.json",
    "title": "stitchlab model profile",
    "type": "object",
    "required": ["format", "name", "batch_size", "device", "device_flops", "layers"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT},
        "name": {"type": "string"},
        "batch_size": {"type": "integer", "exclusiveMinimum": 0},
        "device": {"type": "string"},
        "device_flops": {"type": "number", "exclusiveMinimum": 0},
        "optimizer_time": _NONNEG,
        "optimizer_state_factor": _NONNEG,
        "method": {"enum": ["measured", "estimated"]},
        "layers": {"type": "array", "items": {"$ref": "#/$defs/layer"}},
    },
    "$defs": {
        "param": {
            "type": "object",
            "required": ["name", "shape"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "shape": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                "dtype": {"enum": list(DTYPE_BYTES)},
                "trainable": {"type": "boolean"},
            },
        },
        "layer": {
            "type": "object",
            "required": ["name", "params", "forward_time", "backward_time"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string"},
                "kind": {"enum": list(LAYER_KINDS)},
                "params": {"type": "array", "items": {"$ref": "#/$defs/param"}},
                "forward_time": _NONNEG,
                "backward_time": _NONNEG,
                "activation_bytes": _NONNEG,
                "forward_flops": _NONNEG,
                "in_features": _OPT_INT,
                "out_features": _OPT_INT,
                "tokens": _OPT_INT,
                "num_embeddings": _OPT_INT,
                "embedding_dim": _OPT_INT,
                "grad_density": {"type": ["number", "null"], "minimum": 0},
            },
        },
    },
}
"""JSON Schema (draft 2020-12) of the model profile file format."""
