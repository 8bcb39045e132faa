"""``stitchlab topology ...`` subcommands (plugged into the core CLI through :func:`register`).

    stitchlab topology presets                    list the presets
    stitchlab topology show NAME|FILE [--json] [--svg OUT.svg]
    stitchlab topology discover [--save FILE] [--json]
    stitchlab topology validate FILE              check a topology or model profile JSON file
    stitchlab topology simulate TOPO PROFILE [--strategy FILE] [--global-batch N]

``python -m stitchlab.topology.cli ...`` runs the same without the core CLI.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from . import presets
from .devices import DeviceTopology
from .errors import DocumentError


def _topology(spec: str) -> DeviceTopology:
    """A preset name or a topology file."""
    if spec in presets.names():
        return presets.get(spec)
    if not Path(spec).exists():
        raise DocumentError(f"{spec!r} is neither a preset ({', '.join(presets.names())}) nor a "
                            "file")
    return DeviceTopology.load(spec)


def _cmd_presets(args: argparse.Namespace) -> int:
    for name in presets.names():
        topo = presets.get(name)
        print(f"{name:24s} {len(topo.devices):3d} devices  {topo.description}")
    return 0


def _write(path: str, text: str, what: str) -> None:
    """Write an output file; an unwritable path is a :class:`DocumentError` naming it."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DocumentError(f"cannot write the {what}: {exc.strerror}; give a writable file path",
                            source=path) from None


def _cmd_show(args: argparse.Namespace) -> int:
    topo = _topology(args.topology)
    if args.svg:
        _write(args.svg, topo._repr_svg_(), "SVG")
    print(topo.to_json() if args.json else topo.summary())
    return 0


def _cmd_discover(args: argparse.Namespace) -> int:
    from .discovery import discover

    topo = discover()
    if args.save:
        _write(args.save, topo.to_json() + "\n", "topology")
    print(topo.to_json() if args.json else topo.summary())
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from ._schema import read_json
    from .profile import FORMAT as PROFILE_FORMAT
    from .profile import ModelProfile

    data = read_json(args.file)
    if isinstance(data, dict) and data.get("format") == PROFILE_FORMAT:
        prof = ModelProfile.from_dict(data, args.file)
        print(f"{args.file}: valid model profile, {len(prof.layers)} layers")
    else:
        topo = DeviceTopology.from_dict(data, args.file)
        print(f"{args.file}: valid topology, {len(topo.devices)} devices, {len(topo.links)} links")
    return 0


def _cmd_simulate(args: argparse.Namespace) -> int:
    from .profile import ModelProfile
    from .simulator import simulate
    from .strategy import Strategy

    topo = _topology(args.topology)
    prof = ModelProfile.load(args.profile)
    if args.strategy:
        from ._schema import read_json

        try:
            strategy = Strategy.from_dict(read_json(args.strategy))
        except DocumentError:
            raise
        except ValueError as exc:
            raise DocumentError(str(exc), source=args.strategy) from None
    else:
        strategy = Strategy(topo.ids, [prof.batch_size] * len(topo.devices))
    res = simulate(topo, prof, strategy, args.global_batch, timeline=False)
    print(res.summary())
    return 1 if res.oom else 0


def _guard(func: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except ValueError as exc:  # TopologyError, DocumentError, ProfileError
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return run


def register(subparsers: Any) -> None:
    """Add ``topology`` and its subcommands to the core CLI's subparsers."""
    top = subparsers.add_parser("topology", help="device topologies, presets, discovery, simulate",
                                description="Device topologies: list and show presets, discover "
                                            "this machine, validate JSON files, simulate a step.")
    sub = top.add_subparsers(dest="topology_command", required=True)
    p = sub.add_parser("presets", help="list preset topologies")
    p.set_defaults(func=_guard(_cmd_presets))
    p = sub.add_parser("show", help="describe a preset or a topology file")
    p.add_argument("topology", help="preset name or JSON file")
    p.add_argument("--json", action="store_true", help="print the JSON document")
    p.add_argument("--svg", metavar="OUT", help="also write an SVG picture")
    p.set_defaults(func=_guard(_cmd_show))
    p = sub.add_parser("discover", help="the topology of this machine (NVML, nvidia-smi, CPU)")
    p.add_argument("--save", metavar="FILE", help="write it as JSON")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_guard(_cmd_discover))
    p = sub.add_parser("validate", help="check a topology or model profile JSON file")
    p.add_argument("file")
    p.set_defaults(func=_guard(_cmd_validate))
    p = sub.add_parser("simulate", help="simulate one training step")
    p.add_argument("topology", help="preset name or topology file")
    p.add_argument("profile", help="model profile JSON (ModelProfile.save)")
    p.add_argument("--strategy", help="Strategy JSON (default: all devices, profile batch each)")
    p.add_argument("--global-batch", type=float, default=None)
    p.set_defaults(func=_guard(_cmd_simulate))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stitchlab")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
