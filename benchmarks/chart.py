"""The results chart: fraction of the bandwidth floor each implementation reaches (PNG).

matplotlib is optional: it is on the H200 machine's image but not in this repo's dev venv; without
it ``write_png`` returns a message and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .report import IMPL_TITLES, SIZE_TITLES


def write_png(results: dict[str, Any], path: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"chart: matplotlib not installed, {path} not written"
    m = results["meta"]
    impls = m.get("impls", [])
    blocks = [(s, d) for d in m.get("dtypes", []) for s in m.get("sizes", {})
              if any(c["size"] == s and c["dtype"] == d for c in results.get("cases", []))]
    if not blocks:
        return "chart: no cases, nothing drawn"
    fig, axes = plt.subplots(len(blocks), 1, figsize=(11, 3.2 * len(blocks)), squeeze=False)
    width = 0.8 / max(1, len(impls))
    for ax, (size, dtype) in zip(axes[:, 0], blocks, strict=True):
        cases = [c for c in results["cases"] if c["size"] == size and c["dtype"] == dtype]
        for k, impl in enumerate(impls):
            xs, ys = [], []
            for j, c in enumerate(cases):
                r = c["impls"].get(impl, {})
                t = r.get("device", {}).get("median_us")
                if t and r.get("ok"):
                    xs.append(j + (k - (len(impls) - 1) / 2) * width)
                    ys.append(c["floor_us"] / t)
            ax.bar(xs, ys, width, label=IMPL_TITLES.get(impl, impl))
        ax.axhline(0.9, color="k", lw=0.8, ls="--")
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels([c["workload"] for c in cases], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("floor / time")
        ax.set_title(f"{size} ({SIZE_TITLES.get(size, size)}) {dtype}: fraction of the copy-bandwidth floor "
                     "(higher is better; dashed: 0.90 target)", fontsize=9)
        ax.set_yscale("log")
    axes[0, 0].legend(fontsize=7, ncol=len(impls), loc="upper right")
    fig.suptitle(f"{m.get('hardware', {}).get('gpu')}, commit {m.get('commit')}, {m.get('date')}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return f"chart: wrote {path} ({path.stat().st_size // 1024} KiB)"
