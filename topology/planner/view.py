"""Notebook views of a :class:`~.result.Plan`: an SVG of the plan on the topology and an HTML
table of its decisions. Made here, no graphviz; every piece of user text is escaped.

The SVG draws one box per host with its devices inside. A device taking part is filled in
proportion to its batch share and labelled with it; a device the plan leaves out is grey and
struck through. Reduction groups (the hierarchy) are outlined in dashes, one colour per group.
Below, a strip with one cell per layer, coloured by its communication scheme.
"""

from __future__ import annotations

import math
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .result import Plan

SCHEME_COLOURS = {"allreduce": "#8ecae6", "hierarchical": "#219ebc", "sparse": "#90be6d",
                  "sfb": "#f28482"}
GROUP_COLOURS = ("#fb8500", "#6a4c93", "#2a9d8f", "#e63946", "#457b9d", "#bc6c25")
DEV_W, DEV_H, GAP, PAD = 92, 46, 8, 12


def _ms(t: float) -> str:
    return f"{t * 1e3:.3f} ms" if math.isfinite(t) else "does not fit"


def plan_svg(plan: Plan) -> str:
    """An SVG document of ``plan`` (hosts, devices, shares, groups and per-layer schemes)."""
    s = plan.strategy
    hosts: dict[str, list[str]] = {}
    for dev, host in plan.hosts.items():
        hosts.setdefault(host, []).append(dev)
    for dev in s.devices:  # a plan loaded without hosts still draws its ranks
        if dev not in plan.hosts:
            hosts.setdefault("?", []).append(dev)
    share = dict(zip(s.devices, s.batch_shares, strict=True))
    top = max(s.batch_shares)
    group_of = {s.devices[r]: gi for gi, g in enumerate(s.groups) for r in g}
    per_row = 8
    parts: list[str] = []
    y = 40
    width = PAD * 2 + per_row * (DEV_W + GAP)
    for host, devs in hosts.items():
        rows = math.ceil(len(devs) / per_row)
        h = 22 + rows * (DEV_H + GAP) + GAP
        parts.append(f'<rect x="{PAD}" y="{y}" width="{width - 2 * PAD}" height="{h}" rx="6" '
                     f'fill="#f8f9fa" stroke="#adb5bd"/>')
        parts.append(f'<text x="{PAD + 6}" y="{y + 15}" font-size="12" fill="#495057">host '
                     f'{escape(host)}</text>')
        for i, dev in enumerate(devs):
            x = PAD + GAP + (i % per_row) * (DEV_W + GAP)
            dy = y + 22 + (i // per_row) * (DEV_H + GAP)
            name = escape(dev if len(dev) <= 14 else "…" + dev[-13:])
            if dev in share:
                frac = share[dev] / top
                stroke = GROUP_COLOURS[group_of[dev] % len(GROUP_COLOURS)] \
                    if dev in group_of else "#1d3557"
                dash = ' stroke-dasharray="5 3"' if dev in group_of else ""
                parts.append(f'<rect x="{x}" y="{dy}" width="{DEV_W}" height="{DEV_H}" rx="4" '
                             f'fill="#ffffff" stroke="{stroke}" stroke-width="2"{dash}>'
                             f'<title>{escape(dev)}: {share[dev]} samples</title></rect>')
                parts.append(f'<rect x="{x + 2}" y="{dy + DEV_H - 2 - (DEV_H - 4) * frac:.1f}" '
                             f'width="{DEV_W - 4}" height="{(DEV_H - 4) * frac:.1f}" '
                             f'fill="#a8dadc"/>')
                parts.append(f'<text x="{x + 5}" y="{dy + 16}" font-size="11">{name}</text>')
                parts.append(f'<text x="{x + 5}" y="{dy + 33}" font-size="11" '
                             f'font-weight="bold">{share[dev]} samples</text>')
            else:
                parts.append(f'<rect x="{x}" y="{dy}" width="{DEV_W}" height="{DEV_H}" rx="4" '
                             f'fill="#dee2e6" stroke="#adb5bd"><title>{escape(dev)}: left out'
                             f'</title></rect>')
                parts.append(f'<line x1="{x}" y1="{dy}" x2="{x + DEV_W}" y2="{dy + DEV_H}" '
                             f'stroke="#adb5bd"/>')
                parts.append(f'<text x="{x + 5}" y="{dy + 16}" font-size="11" '
                             f'fill="#6c757d">{name}</text>')
                parts.append(f'<text x="{x + 5}" y="{dy + 33}" font-size="11" '
                             f'fill="#6c757d">left out</text>')
        y += h + GAP
    # per-layer scheme strip
    layers = list(s.schemes)
    y += 6
    parts.append(f'<text x="{PAD}" y="{y + 10}" font-size="12">per-layer schemes (layers not '
                 f'shown: allreduce)</text>')
    y += 16
    cell = max(4.0, min(40.0, (width - 2 * PAD) / max(len(layers), 1)))
    for i, layer in enumerate(layers):
        scheme = s.schemes[layer]
        x = PAD + (i * cell) % (width - 2 * PAD - cell + 1)
        row = int(i * cell // (width - 2 * PAD - cell + 1))
        parts.append(f'<rect x="{x:.1f}" y="{y + row * 16}" width="{cell - 1:.1f}" height="14" '
                     f'fill="{SCHEME_COLOURS.get(scheme, "#ccc")}"><title>{escape(layer)}: '
                     f'{escape(scheme)}</title></rect>')
    y += 16 * (1 + int(len(layers) * cell // (width - 2 * PAD))) + 6
    lx = PAD
    for scheme, colour in SCHEME_COLOURS.items():
        parts.append(f'<rect x="{lx}" y="{y}" width="12" height="12" fill="{colour}"/>'
                     f'<text x="{lx + 16}" y="{y + 10}" font-size="11">{scheme}</text>')
        lx += 110
    y += 22
    title = (f"{escape(plan.model)} on {escape(plan.topology)}: {_ms(plan.step_time)} per step, "
             f"{plan.speedup:.2f}x over plain data parallel")
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
            f'viewBox="0 0 {width} {y}" font-family="sans-serif">'
            f'<text x="{PAD}" y="24" font-size="14" font-weight="bold">{title}</text>')
    return head + "".join(parts) + "</svg>"


def plan_html(plan: Plan) -> str:
    """HTML: headline numbers, the SVG, and a table of decisions with their times."""
    rows = []
    for d in plan.decisions:
        rows.append(
            f"<tr><td>{escape(d.decision)}</td><td>{escape(d.choice)}</td>"
            f"<td>{escape(d.alternative)}</td><td>{_ms(d.time_with)}</td>"
            f"<td>{_ms(d.time_without)}</td></tr>")
    search = ", ".join(f"{escape(str(k))}={escape(str(v))}" for k, v in plan.search.items())
    return (
        f"<div class='stitchlab-plan'><h4>Plan for {escape(plan.model)} on "
        f"{escape(plan.topology)}</h4>"
        f"<p>estimated step <b>{_ms(plan.step_time)}</b>, plain data parallel "
        f"{_ms(plan.baseline_time)}, speed-up <b>{plan.speedup:.2f}x</b>; "
        f"{plan.world_size} ranks, global batch {plan.global_batch}</p>"
        f"{plan_svg(plan)}"
        "<table><thead><tr><th>decision</th><th>choice</th><th>compared with</th>"
        "<th>step with</th><th>step without</th></tr></thead><tbody>"
        + "".join(rows) + f"</tbody></table><p><small>{search}</small></p></div>")
