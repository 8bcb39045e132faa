"""The device topology graph: compute devices, switches and the links between them.

Units are SI throughout: ``flops`` in FLOP/s, ``memory`` in bytes, ``bandwidth`` in bytes/s **per
direction** (links are full duplex), ``latency`` in seconds.

Non-compute nodes (an NVSwitch, a PCIe switch, a CPU root complex, a network switch) are
:class:`Switch` nodes, so that two flows through one physical link share its bandwidth: that is how
the cost models see contention (for example eight GPUs behind one network card).

Example:
    >>> from stitchlab.topology import DeviceTopology, Device, Link
    >>> topo = DeviceTopology(
    ...     devices=[Device("gpu0", "gpu", flops=1e14, memory=80 * 2**30),
    ...              Device("gpu1", "gpu", flops=1e14, memory=80 * 2**30)],
    ...     links=[Link("gpu0", "gpu1", bandwidth=100e9, latency=2e-6, kind="nvlink")])
    >>> topo.route("gpu0", "gpu1").bandwidth
    100000000000.0
"""

from __future__ import annotations

import heapq
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ._schema import parse_json, read_json, validate, write_json
from .errors import TopologyError

FORMAT = "stitchlab.topology/1"
DEVICE_KINDS = ("gpu", "cpu")
SWITCH_KINDS = ("nvswitch", "pcie", "cpu", "network")
LINK_KINDS = ("nvlink", "nvswitch", "pcie", "host", "network")
"""``host``: inside one host between CPU sockets or processes (UPI/QPI, shared memory, loopback)."""


def _check_kind(what: str, ident: str, kind: str, allowed: tuple[str, ...]) -> None:
    if kind not in allowed:
        raise TopologyError(
            f"{what} {ident!r} has unknown kind {kind!r}; expected one of {', '.join(allowed)}"
        )


def _check_positive(what: str, value: float, unit: str) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0 \
            or math.isinf(value):
        raise TopologyError(f"{what} is {value!r}; it must be a positive finite number of {unit}")


@dataclass(frozen=True)
class Device:
    """A compute device.

    Args:
        id: unique name in the topology (``"node0/gpu3"``).
        kind: one of :data:`DEVICE_KINDS`.
        flops: sustained compute speed in FLOP/s (used to scale measured layer times and to
            estimate them from FLOPs).
        memory: usable memory in bytes.
        host: the machine it sits in (devices of one host share its network card(s) and can use
            intra-host links).
        name: the product name for display (``"NVIDIA H200"``).
    """

    id: str
    kind: str
    flops: float
    memory: int
    host: str = "localhost"
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise TopologyError(f"device id {self.id!r} must be a non-empty string")
        _check_kind("device", self.id, self.kind, DEVICE_KINDS)
        _check_positive(f"device {self.id!r} flops", self.flops, "FLOP/s")
        _check_positive(f"device {self.id!r} memory", self.memory, "bytes")


@dataclass(frozen=True)
class Switch:
    """A non-compute node that links pass through (NVSwitch, PCIe switch, CPU, network switch)."""

    id: str
    kind: str
    host: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise TopologyError(f"switch id {self.id!r} must be a non-empty string")
        _check_kind("switch", self.id, self.kind, SWITCH_KINDS)


@dataclass(frozen=True)
class Link:
    """A full-duplex link between two nodes (devices or switches).

    Args:
        a, b: node ids.
        bandwidth: bytes/s in each direction (> 0).
        latency: seconds per message crossing this link (>= 0); a collective's α is the sum of the
            latencies along the path.
        kind: one of :data:`LINK_KINDS`.
    """

    a: str
    b: str
    bandwidth: float
    latency: float = 0.0
    kind: str = "pcie"

    def __post_init__(self) -> None:
        name = f"link {self.a!r}-{self.b!r}"
        if self.kind not in LINK_KINDS:
            raise TopologyError(
                f"{name} has unknown kind {self.kind!r}; expected one of {', '.join(LINK_KINDS)}"
            )
        _check_positive(f"{name} bandwidth", self.bandwidth, "bytes/s")
        if not isinstance(self.latency, (int, float)) or not 0 <= self.latency < math.inf:
            raise TopologyError(f"{name} latency is {self.latency!r}; it must be >= 0 seconds")
        if self.a == self.b:
            raise TopologyError(f"{name} connects a node to itself; remove it")


@dataclass(frozen=True)
class Route:
    """The path between two devices: directed link keys (``2*index + direction``), the bottleneck
    bandwidth and the summed latency."""

    hops: tuple[int, ...]
    bandwidth: float
    latency: float


@dataclass
class DeviceTopology:
    """Devices, switches and links; immutable in use (routes are cached on the object).

    Raises:
        TopologyError: duplicate ids, a link to an unknown node, or devices that cannot reach each
            other (the message names the unreachable devices).
    """

    devices: list[Device]
    links: list[Link]
    switches: list[Switch] = field(default_factory=list)
    name: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        for name in ("devices", "links", "switches"):
            if not isinstance(getattr(self, name), (list, tuple)):
                raise TopologyError(f"DeviceTopology {name} {getattr(self, name)!r} must be a list")
        self.devices = list(self.devices)
        self.links = list(self.links)
        self.switches = list(self.switches)
        if not self.devices:
            raise TopologyError("a topology needs at least one device")
        for items, cls in ((self.devices, Device), (self.links, Link), (self.switches, Switch)):
            for item in items:
                if not isinstance(item, cls):
                    raise TopologyError(f"{item!r} is a {type(item).__name__}, not a {cls.__name__}; "
                                        f"build it with {cls.__name__}(...)")
        self._index: dict[str, int] = {}
        for node in [*self.devices, *self.switches]:
            if node.id in self._index:
                raise TopologyError(f"duplicate node id {node.id!r}; ids must be unique")
            self._index[node.id] = len(self._index)
        self._by_id = {d.id: d for d in self.devices}
        self._adj: list[list[tuple[int, int]]] = [[] for _ in self._index]  # (neighbour, key)
        for i, link in enumerate(self.links):
            for end in (link.a, link.b):
                if end not in self._index:
                    raise TopologyError(
                        f"link {link.a!r}-{link.b!r} names unknown node {end!r}; known nodes: "
                        f"{', '.join(sorted(self._index))}"
                    )
            a, b = self._index[link.a], self._index[link.b]
            self._adj[a].append((b, 2 * i))
            self._adj[b].append((a, 2 * i + 1))
        self._routes: dict[tuple[str, str], Route] = {}
        self._wide: dict[str, dict[int, float]] = {}
        self._from: dict[tuple[str, float], dict[int, tuple[int, int]]] = {}
        self.cache: dict[Any, Any] = {}  # for cost models keyed on this topology
        self._check_connected()

    # ----------------------------------------------------------------- queries
    @property
    def ids(self) -> list[str]:
        """Device ids in topology order."""
        return [d.id for d in self.devices]

    def device(self, ident: str) -> Device:
        try:
            return self._by_id[ident]
        except KeyError:
            raise TopologyError(
                f"unknown device {ident!r}; this topology has {', '.join(self.ids)}"
            ) from None

    def hosts(self) -> dict[str, list[str]]:
        """Host name -> its device ids, in topology order."""
        out: dict[str, list[str]] = {}
        for d in self.devices:
            out.setdefault(d.host, []).append(d.id)
        return out

    def islands(self, kinds: Iterable[str] = ("nvlink", "nvswitch")) -> list[list[str]]:
        """Groups of devices connected through links of the given kinds (NVLink domains by
        default); a device with no such link is an island of its own."""
        kinds = set(kinds)
        parent = {d.id: d.id for d in self.devices}
        nodes = {n: n for n in self._index}

        def find(x: str) -> str:
            while nodes[x] != x:
                nodes[x] = nodes[nodes[x]]
                x = nodes[x]
            return x

        for link in self.links:
            if link.kind in kinds:
                nodes[find(link.a)] = find(link.b)
        groups: dict[str, list[str]] = {}
        for d in parent:
            groups.setdefault(find(d), []).append(d)
        return list(groups.values())

    def total_memory(self) -> int:
        return sum(d.memory for d in self.devices)

    # ----------------------------------------------------------------- routing
    def _widest(self, src: str) -> dict[int, float]:
        """Bottleneck bandwidth of the widest path from ``src`` to every node."""
        if src in self._wide:
            return self._wide[src]
        start = self._index[src]
        best: dict[int, float] = {start: math.inf}
        heap = [(-math.inf, start)]
        while heap:
            nbw, u = heapq.heappop(heap)
            if -nbw < best[u]:
                continue  # a wider path reached u already
            for v, key in self._adj[u]:
                bw = min(-nbw, self.links[key // 2].bandwidth)
                if bw > best.get(v, -math.inf):
                    best[v] = bw
                    heapq.heappush(heap, (-bw, v))
        self._wide[src] = best
        return best

    def _tree(self, src: str, min_bandwidth: float) -> dict[int, tuple[int, int]]:
        """Lowest-latency tree from ``src`` (ties: fewer hops, then node order) over the links of
        at least ``min_bandwidth``: node -> (previous node, directed link key).

        Routing is in two steps because the widest path with the lowest latency is not found by
        one search on (bandwidth, latency) labels: a path that is wider part way (through a
        neighbour's faster PCIe link) can end at the same bottleneck with more latency.
        """
        if (src, min_bandwidth) in self._from:
            return self._from[src, min_bandwidth]
        start = self._index[src]
        best: dict[int, tuple[float, int]] = {start: (0.0, 0)}
        prev: dict[int, tuple[int, int]] = {}
        heap = [(0.0, 0, start)]
        done: set[int] = set()
        while heap:
            lat, hops, u = heapq.heappop(heap)
            if u in done:
                continue
            done.add(u)
            for v, key in self._adj[u]:
                link = self.links[key // 2]
                if link.bandwidth < min_bandwidth:
                    continue
                cand = (lat + link.latency, hops + 1)
                if v not in done and (v not in best or cand < best[v]):
                    best[v] = cand
                    prev[v] = (u, key)
                    heapq.heappush(heap, (*cand, v))
        self._from[src, min_bandwidth] = prev
        return prev

    def route(self, src: str, dst: str) -> Route:
        """The path data travels from device ``src`` to device ``dst``: the widest (largest
        bottleneck bandwidth); among those the lowest summed latency, then the fewest hops."""
        key = (src, dst)
        if key in self._routes:
            return self._routes[key]
        self.device(src), self.device(dst)
        if src == dst:
            route = Route((), math.inf, 0.0)
        else:
            prev = self._tree(src, self._widest(src)[self._index[dst]])
            hops: list[int] = []
            node = self._index[dst]
            while node != self._index[src]:
                node, link_key = prev[node]
                hops.append(link_key)
            hops.reverse()
            route = Route(
                tuple(hops),
                min(self.links[k // 2].bandwidth for k in hops),
                sum(self.links[k // 2].latency for k in hops),
            )
        self._routes[key] = route
        return route

    def flow_rates(self, flows: Sequence[tuple[str, str]]) -> list[tuple[float, float]]:
        """(latency, bandwidth) of each of several concurrent flows ``(src, dst)``.

        Flows that cross the same directed link share its bandwidth equally; each flow gets the
        smallest share along its path (a bottleneck-link model, not max-min fair). A flow from a
        device to itself costs nothing (infinite bandwidth).
        """
        routes = [self.route(s, d) for s, d in flows]
        load: dict[int, int] = {}
        for r in routes:
            for k in r.hops:
                load[k] = load.get(k, 0) + 1
        out = []
        for r in routes:
            if not r.hops:
                out.append((0.0, math.inf))
                continue
            bw = min(self.links[k // 2].bandwidth / load[k] for k in r.hops)
            out.append((r.latency, bw))
        return out

    def _check_connected(self) -> None:
        first = self.devices[0].id
        seen = {self._index[first]}
        stack = [self._index[first]]
        while stack:
            u = stack.pop()
            for v, _ in self._adj[u]:
                if v not in seen:
                    seen.add(v)
                    stack.append(v)
        cut = [d.id for d in self.devices if self._index[d.id] not in seen]
        if cut:
            raise TopologyError(
                f"the topology is disconnected: device(s) {', '.join(map(repr, cut))} cannot "
                f"reach {first!r}; add a link (e.g. a 'network' link between their hosts)"
            )

    # ----------------------------------------------------------------- derived topologies
    def with_link_params(
        self, *, kind: str | None = None, bandwidth: float | None = None,
        latency: float | None = None,
    ) -> DeviceTopology:
        """A copy where links (of ``kind``, or all) get a new bandwidth and/or latency — e.g. the
        α and β fitted by :mod:`stitchlab.topology.calibrate`."""
        links = [
            Link(ln.a, ln.b,
                 bandwidth if bandwidth is not None and kind in (None, ln.kind) else ln.bandwidth,
                 latency if latency is not None and kind in (None, ln.kind) else ln.latency,
                 ln.kind)
            for ln in self.links
        ]
        return DeviceTopology(self.devices, links, self.switches, self.name, self.description)

    # ----------------------------------------------------------------- serialization
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "name": self.name,
            "description": self.description,
            "devices": [asdict(d) for d in self.devices],
            "switches": [asdict(s) for s in self.switches],
            "links": [asdict(ln) for ln in self.links],
        }

    @classmethod
    def from_dict(cls, data: Any, source: str | None = None) -> DeviceTopology:
        """Build from a dict in the JSON format (validated against :data:`SCHEMA`).

        Raises:
            DocumentError: the document breaks the schema (names the JSON path).
            TopologyError: the document is well-formed but the topology is not (e.g. disconnected).
        """
        validate(data, SCHEMA, source)
        return cls(
            devices=[Device(**d) for d in data["devices"]],
            switches=[Switch(**s) for s in data.get("switches", [])],
            links=[Link(**ln) for ln in data["links"]],
            name=data.get("name", ""),
            description=data.get("description", ""),
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str, source: str | None = None) -> DeviceTopology:
        return cls.from_dict(parse_json(text, source), source)

    def save(self, path: str | Path) -> None:
        """Write the topology as JSON (format :data:`FORMAT`, schema :data:`SCHEMA`)."""
        write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> DeviceTopology:
        """Read a topology JSON file; errors name the file and the place in it."""
        return cls.from_dict(read_json(path), str(path))

    # ----------------------------------------------------------------- display
    def summary(self) -> str:
        """A few lines of text: hosts, devices, link kinds and bandwidths."""
        lines = [f"{self.name or 'topology'}: {len(self.devices)} devices on "
                 f"{len(self.hosts())} host(s)"]
        for host, ids in self.hosts().items():
            devs = [self._by_id[i] for i in ids]
            kinds = sorted({d.name or d.kind for d in devs})
            lines.append(f"  {host}: {len(ids)} x {', '.join(kinds)} "
                         f"({_flops(devs[0].flops)}, {devs[0].memory / 2**30:.0f} GiB)")
        per_kind: dict[str, set[float]] = {}
        for ln in self.links:
            per_kind.setdefault(ln.kind, set()).add(ln.bandwidth)
        for kind, bws in sorted(per_kind.items()):
            shown = ", ".join(f"{b / 1e9:g}" for b in sorted(bws))
            lines.append(f"  {kind} links: {shown} GB/s per direction")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"DeviceTopology(name={self.name!r}, devices={len(self.devices)}, "
                f"switches={len(self.switches)}, links={len(self.links)})")

    def _repr_svg_(self) -> str:
        from ._svg import render_svg

        return render_svg(self)

    def _repr_html_(self) -> str:
        from ._svg import render_html

        return render_html(self)


def _flops(value: float) -> str:
    return f"{value / 1e12:.0f} TFLOP/s" if value >= 1e12 else f"{value / 1e9:.1f} GFLOP/s"


_NUMBER_POS = {"type": "number", "exclusiveMinimum": 0}
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://stitchlab.dev/schemas/topology-1.json",
    "title": "stitchlab device topology",
    "description": "Devices, switches and full-duplex links. SI units: FLOP/s, bytes, bytes/s per "
                   "direction, seconds.",
    "type": "object",
    "required": ["format", "devices", "links"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "devices": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/device"}},
        "switches": {"type": "array", "items": {"$ref": "#/$defs/switch"}},
        "links": {"type": "array", "items": {"$ref": "#/$defs/link"}},
    },
    "$defs": {
        "device": {
            "type": "object",
            "required": ["id", "kind", "flops", "memory"],
            "additionalProperties": False,
            "properties": {
                "id": {"type": "string", "minLength": 1},
                "kind": {"enum": list(DEVICE_KINDS)},
                "flops": _NUMBER_POS,
                "memory": {"type": "integer", "exclusiveMinimum": 0},
                "host": {"type": "string"},
                "name": {"type": "string"},
            },
        },
        "switch": {
            "type": "object",
            "required": ["id", "kind"],
            "additionalProperties": False,
            "properties": {
                "id": {"type": "string", "minLength": 1},
                "kind": {"enum": list(SWITCH_KINDS)},
                "host": {"type": ["string", "null"]},
            },
        },
        "link": {
            "type": "object",
            "required": ["a", "b", "bandwidth", "kind"],
            "additionalProperties": False,
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "string"},
                "bandwidth": _NUMBER_POS,
                "latency": {"type": "number", "minimum": 0},
                "kind": {"enum": list(LINK_KINDS)},
            },
        },
    },
}
"""JSON Schema (draft 2020-12) of the topology file format."""
