"""Collect what scripts/x2-check.sh wrote into one ``results.json`` and print a short table.

    python3 scripts/x2_summary.py OUT_DIR PHASES_TSV

Reads, where present, ``machine.txt``, ``validation-ddp.json``, ``validation-horovod.json``,
``horovod-step.json`` and ``horovod-build.log`` (its last lines) from OUT_DIR, and the phases'
``name<TAB>exit status<TAB>seconds`` lines from PHASES_TSV. A missing or broken file is recorded
as such; the script itself does not fail on it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        return {"error": f"{path.name}: {e}"}


def _phases(path: Path) -> dict[str, dict[str, Any]]:
    phases: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return phases
    for line in path.read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            rc = parts[1]
            phases[parts[0]] = {"rc": int(rc) if rc.lstrip("-").isdigit() else rc,
                                "seconds": int(parts[2])}
    return phases


def _runs(validation: Any) -> list[dict[str, Any]]:
    """The validation JSON holds one result (--repeat 1) or a list; drop the raw worker output."""
    if validation is None or (isinstance(validation, dict) and "error" in validation):
        return []
    runs = validation if isinstance(validation, list) else [validation]
    return [{k: v for k, v in r.items() if k != "raw"} for r in runs]


def collect(out: Path, phases_tsv: Path) -> dict[str, Any]:
    build_log = out / "horovod-build.log"
    machine = out / "machine.txt"
    return {
        "format": "stitchlab.x2-check/1",
        "commit": os.environ.get("STITCHLAB_COMMIT", "unknown"),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "phases": _phases(phases_tsv),
        "machine": machine.read_text().splitlines()[:80] if machine.exists() else None,
        "horovod_build_tail": (build_log.read_text(errors="replace").splitlines()[-15:]
                               if build_log.exists() else None),
        "validation_ddp_nccl": _runs(_load_json(out / "validation-ddp.json")),
        "validation_horovod_nccl": _runs(_load_json(out / "validation-horovod.json")),
        "horovod_step": _load_json(out / "horovod-step.json"),
    }


def table(results: dict[str, Any]) -> str:
    lines = [f"commit {results['commit']}, {results['date']}", "", "phase          rc   seconds"]
    for name, p in results["phases"].items():
        lines.append(f"{name:14s} {str(p['rc']):>4s} {p['seconds']:8d}")
    for key, title in (("validation_ddp_nccl", "DDP over NCCL"),
                       ("validation_horovod_nccl", "Horovod over NCCL")):
        if results[key]:
            lines += ["", f"simulator vs measured, {title}:",
                      "run  alpha_us  GB/s   measured_ms (min-max)     simulated_ms  error   paired"]
            for i, r in enumerate(results[key], 1):
                lo, hi = r["measured_spread_ms"]
                lines.append(f"{i:3d} {r['alpha_us']:9.1f} {r['bandwidth_gbs']:6.1f} "
                             f"{r['measured_ms']:9.2f} ({lo:.2f}-{hi:.2f}) {r['simulated_ms']:12.2f} "
                             f"{r['error']:+7.1%} {r['paired_error']:+7.1%}")
    step = results["horovod_step"]
    if isinstance(step, dict) and "rows" in step:
        lines += ["", f"horovod_step ({step['ranks']} ranks, {step['device']}, "
                      f"nccl_built {step['nccl_built']}):",
                  "model        plain_ms  planned_ms  speed-up  SFB layers"]
        for r in step["rows"]:
            lines.append(f"{r['model']:12s} {r['plain_ms']:8.2f} {r['planned_ms']:11.2f} "
                         f"{r['speedup']:8.2f}x  {', '.join(r['sfb_layers']) or 'none'}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0])
    results = collect(out, Path(argv[1]))
    (out / "results.json").write_text(json.dumps(results, indent=2))
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
