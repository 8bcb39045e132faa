"""SVG and HTML views of a :class:`DeviceTopology` for notebooks (no graphviz, no binaries).

Hosts are boxes laid out in rows; their devices (rectangles) and switches (circles) sit inside;
switches of no host (a network fabric) sit below. Links are lines coloured by bandwidth (legend
lists each distinct bandwidth); hovering shows details. Every piece of user text is escaped.
"""

from __future__ import annotations

import math
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .devices import DeviceTopology

# slow -> fast
_PALETTE = ["#d62728", "#ff7f0e", "#bcbd22", "#2ca02c", "#17becf", "#1f77b4", "#9467bd"]
_DEV_W, _DEV_H, _GAP = 112, 44, 12
_COLS = 4


def _colour(bw: float, lo: float, hi: float) -> str:
    if hi <= lo:
        return _PALETTE[-2]
    x = (math.log(bw) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return _PALETTE[min(len(_PALETTE) - 1, int(x * (len(_PALETTE) - 1) + 0.5))]


def _rate(bw: float) -> str:
    return f"{bw / 1e9:g} GB/s"


def _layout(topo: DeviceTopology) -> tuple[dict[str, tuple[float, float]], list[tuple], float,
                                           float]:
    """Centres of nodes, host boxes (x, y, w, h, label) and the canvas size."""
    pos: dict[str, tuple[float, float]] = {}
    boxes = []
    hosts: dict[str | None, tuple[list[str], list[str]]] = {}
    for d in topo.devices:
        hosts.setdefault(d.host, ([], []))[0].append(d.id)
    loose = []
    for s in topo.switches:
        if s.host is None:
            loose.append(s.id)
        else:
            hosts.setdefault(s.host, ([], []))[1].append(s.id)
    x, y, row_h, width = _GAP, _GAP, 0.0, 0.0
    per_row = 4 if len(hosts) > 4 else max(1, len(hosts))
    for i, (host, (devs, sws)) in enumerate(hosts.items()):
        cols = max(1, min(_COLS, max(len(devs), len(sws))))
        w = cols * (_DEV_W + _GAP) + _GAP
        rows = math.ceil(len(devs) / cols) if devs else 0
        h = 26 + rows * (_DEV_H + _GAP) + (48 if sws else 0) + _GAP
        if i and i % per_row == 0:
            x, y = _GAP, y + row_h + 2 * _GAP
            row_h = 0.0
        boxes.append((x, y, w, h, host or ""))
        for k, d in enumerate(devs):
            pos[d] = (x + _GAP + (k % cols) * (_DEV_W + _GAP) + _DEV_W / 2,
                      y + 26 + (k // cols) * (_DEV_H + _GAP) + _DEV_H / 2)
        for k, s in enumerate(sws):
            span = w / (len(sws) + 1)
            pos[s] = (x + span * (k + 1), y + 26 + rows * (_DEV_H + _GAP) + 22)
        x += w + 2 * _GAP
        row_h = max(row_h, h)
        width = max(width, x)
    y += row_h + 2 * _GAP
    for k, s in enumerate(loose):
        pos[s] = (width / (len(loose) + 1) * (k + 1), y + 20)
    height = y + (50 if loose else 0)
    return pos, boxes, max(width, 320.0), height


def render_svg(topo: DeviceTopology) -> str:
    """The topology as a standalone SVG document string."""
    pos, boxes, width, height = _layout(topo)
    bws = sorted({ln.bandwidth for ln in topo.links})
    lo, hi = (bws[0], bws[-1]) if bws else (1.0, 1.0)
    legend_h = 22 * len(bws) + 30
    total_h = height + legend_h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{total_h:.0f}" '
           f'viewBox="0 0 {width:.0f} {total_h:.0f}" font-family="sans-serif" font-size="11">',
           f"<title>{escape(topo.name or 'device topology')}</title>"]
    for x, y, w, h, label in boxes:
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="8" '
                   'fill="#f7f7f7" stroke="#999"/>')
        out.append(f'<text x="{x + 8:.1f}" y="{y + 16:.1f}" font-weight="bold">'
                   f"{escape(label)}</text>")
    for ln in topo.links:
        (x1, y1), (x2, y2) = pos[ln.a], pos[ln.b]
        stroke = 1.5 + 3.0 * (math.log(ln.bandwidth / lo) / math.log(hi / lo) if hi > lo else 1)
        tip = (f"{ln.a} - {ln.b}: {ln.kind}, {_rate(ln.bandwidth)} per direction, "
               f"{ln.latency * 1e6:g} us")
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                   f'stroke="{_colour(ln.bandwidth, lo, hi)}" stroke-width="{stroke:.1f}" '
                   f'stroke-opacity="0.8"><title>{escape(tip)}</title></line>')
    for s in topo.switches:
        x, y = pos[s.id]
        out.append(f'<g><title>{escape(f"{s.id} ({s.kind} switch)")}</title>'
                   f'<circle cx="{x:.1f}" cy="{y:.1f}" r="13" fill="#fff" stroke="#555"/>'
                   f'<text x="{x:.1f}" y="{y + 26:.1f}" text-anchor="middle" fill="#555">'
                   f"{escape(s.id)}</text></g>")
    for d in topo.devices:
        x, y = pos[d.id]
        tip = (f"{d.id}: {d.name or d.kind}, {d.flops / 1e12:g} TFLOP/s, "
               f"{d.memory / 2**30:.1f} GiB, host {d.host}")
        out.append(f'<g><title>{escape(tip)}</title>'
                   f'<rect x="{x - _DEV_W / 2:.1f}" y="{y - _DEV_H / 2:.1f}" width="{_DEV_W}" '
                   f'height="{_DEV_H}" rx="5" fill="{"#e8f0fe" if d.kind == "gpu" else "#fdf2e3"}"'
                   ' stroke="#333"/>'
                   f'<text x="{x:.1f}" y="{y - 3:.1f}" text-anchor="middle">{escape(d.id)}</text>'
                   f'<text x="{x:.1f}" y="{y + 12:.1f}" text-anchor="middle" fill="#555" '
                   f'font-size="9">{escape((d.name or d.kind)[:22])}</text></g>')
    y = height + 14
    out.append(f'<text x="{_GAP}" y="{y:.1f}" font-weight="bold">link bandwidth (per '
               "direction)</text>")
    for k, bw in enumerate(bws):
        yy = y + 16 + 22 * k
        kinds = sorted({ln.kind for ln in topo.links if ln.bandwidth == bw})
        out.append(f'<line x1="{_GAP}" y1="{yy:.1f}" x2="{_GAP + 40}" y2="{yy:.1f}" '
                   f'stroke="{_colour(bw, lo, hi)}" stroke-width="4"/>'
                   f'<text x="{_GAP + 48}" y="{yy + 4:.1f}">{escape(_rate(bw))} '
                   f"({escape(', '.join(kinds))})</text>")
    out.append("</svg>")
    return "\n".join(out)


def render_html(topo: DeviceTopology) -> str:
    """A heading, the one-line summary per host and the SVG, for ``_repr_html_``."""
    lines = topo.summary().splitlines()
    items = "".join(f"<li>{escape(line.strip())}</li>" for line in lines[1:])
    return (f'<div class="stitchlab-topology"><strong>{escape(lines[0])}</strong>'
            + (f"<p>{escape(topo.description)}</p>" if topo.description else "")
            + f"<ul>{items}</ul>{render_svg(topo)}</div>")
