"""``stitchlab plan``: plan data-parallel training from the command line, or train the planner's GNN.

Usage::

    stitchlab plan --topology hetero-4fast-4slow-eth --model profile.json
    stitchlab plan --topology cluster.json --model profile.json --budget 400 --out plan.json
    stitchlab plan --topology h200-2gpu --model profile.json --cycle-ms 1.02   # calibrated cycle
    stitchlab plan train --seed 0 --out planner_gnn.npz

``--topology`` takes a preset name (``stitchlab.topology.presets.names()``) or a topology JSON
file; ``--model`` a :class:`~stitchlab.topology.ModelProfile` JSON file (``ModelProfile.save``).
The core CLI imports this module when it exists and calls :func:`register`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import ProfileError, TopologyError
from .simulator import HOROVOD_DEFAULTS, HorovodCycle


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``plan`` subcommand to the ``stitchlab`` parser."""
    p = subparsers.add_parser(
        "plan", help="plan data-parallel training on a topology (or: plan train)",
        description="Plan data-parallel training of a model profile on a device topology: "
                    "devices, batch shares, grouping, buckets, sparse and SFB compression. "
                    "`stitchlab plan train --seed 0 --out FILE` trains the planner's GNN.")
    p.add_argument("action", nargs="?", choices=["train"],
                   help="'train': train the GNN prior on simulator rollouts")
    p.add_argument("--topology", help="preset name or topology JSON file")
    p.add_argument("--model", help="model profile JSON file (ModelProfile.save)")
    p.add_argument("--global-batch", type=int, default=None,
                   help="samples per step over all ranks (default: profile batch x devices)")
    p.add_argument("--budget", type=int, default=200, help="simulator calls (default 200)")
    p.add_argument("--seed", type=int, default=0, help="search / training seed (default 0)")
    p.add_argument("--prior", choices=["gnn", "uniform"], default="gnn",
                   help="MCTS prior: the shipped GNN (default) or uniform")
    p.add_argument("--weights", default=None, help="GNN weights file instead of the shipped one")
    p.add_argument("--all-devices", action="store_true",
                   help="keep every device (a job of fixed world size)")
    p.add_argument("--cycle-ms", type=float, default=None,
                   help="Horovod's cycle (HOROVOD_CYCLE_TIME, or a calibrated cycle) in ms "
                        "(default 1)")
    p.add_argument("--fusion-mib", type=float, default=None,
                   help="Horovod's fusion threshold (HOROVOD_FUSION_THRESHOLD) in MiB "
                        "(default 128)")
    p.add_argument("--fixed-buckets", action="store_true",
                   help="simulate fixed buckets sent when ready (DDP) instead of Horovod's loop")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.add_argument("--out", default=None,
                   help="write the plan JSON here (with 'train': the weights file, required)")
    p.add_argument("--svg", default=None, help="write the plan's SVG view here")
    p.add_argument("--cases", type=int, default=400, help="train: training cases (default 400)")
    p.add_argument("--epochs", type=int, default=40, help="train: epochs (default 40)")
    p.set_defaults(func=run)


def _horovod(args: argparse.Namespace) -> HorovodCycle | None:
    """The loop ``--cycle-ms``/``--fusion-mib``/``--fixed-buckets`` ask for."""
    if args.fixed_buckets:
        if args.cycle_ms is not None or args.fusion_mib is not None:
            raise ValueError("--fixed-buckets simulates no Horovod loop; drop --cycle-ms and "
                             "--fusion-mib, or drop --fixed-buckets")
        return None
    cycle = HOROVOD_DEFAULTS.cycle_time if args.cycle_ms is None else args.cycle_ms * 1e-3
    fusion = HOROVOD_DEFAULTS.fusion_bytes if args.fusion_mib is None else args.fusion_mib * 2**20
    return HorovodCycle(cycle, fusion)


def _check_writable(path: str | None, flag: str) -> None:
    """Refuse an output path that cannot be written before any planning or training runs."""
    if not path:
        return
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"{flag} {path!r} is a directory; give a file path")
    if not target.parent.is_dir():
        raise ValueError(f"{flag} {path!r}: the folder {str(target.parent)!r} does not exist; "
                         "create it or give another path")


def run(args: argparse.Namespace) -> int:
    """Run ``stitchlab plan``; returns the exit status (2 on bad input, with the reason)."""
    try:
        _check_writable(args.out, "--out")
        _check_writable(args.svg, "--svg")
        if args.action == "train":
            if not args.out:
                raise ValueError("stitchlab plan train needs --out FILE (the weights .npz to "
                                 "write)")
            from .planner import train

            return train.run(args)
        if not args.topology or not args.model:
            missing = [f for f, v in (("--topology", args.topology), ("--model", args.model))
                       if not v]
            raise ValueError(f"stitchlab plan needs {' and '.join(missing)}: e.g. "
                             "`stitchlab plan --topology hetero-4fast-4slow-eth --model "
                             "profile.json`")
        from .planner import plan

        result = plan(args.topology, args.model, global_batch=args.global_batch,
                      budget=args.budget, seed=args.seed, prior=args.prior, weights=args.weights,
                      all_devices=args.all_devices, horovod=_horovod(args))
    except (ValueError, TopologyError, ProfileError) as exc:
        print(f"stitchlab plan: error: {exc}", file=sys.stderr)
        return 2
    print(result.to_json() if args.json else result.summary())
    try:
        if args.out:
            result.save(args.out)
            print(f"wrote {args.out}", file=sys.stderr)
        if args.svg:
            with open(args.svg, "w", encoding="utf-8") as fh:
                fh.write(result.to_svg())
            print(f"wrote {args.svg}", file=sys.stderr)
    except OSError as exc:
        print(f"stitchlab plan: error: cannot write {exc.filename}: {exc.strerror}",
              file=sys.stderr)
        return 1
    if not args.json:
        print(f"estimated speed-up over plain data parallel: {result.speedup:.2f}x")
    return 0
