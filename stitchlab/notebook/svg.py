"""The plan picture: an SVG drawing of a :class:`~.adapter.PlanView`, made here (no graphviz).

Layout: nodes go into layers by their longest path from an input (top to bottom); a long edge
gets a thin virtual slot in every layer it crosses, so no line runs through a box. Within a
layer the slots are ordered by kernel, then by the mean position of their neighbours (three
sweeps), and placed as close to their neighbours as spacing allows. Each kernel's nodes are
filled in the kernel's colour and covered by one translucent region; its name, estimated time
and schedule sit in the left gutter. Each edge is drawn in the style of its stitching scheme;
all but register edges carry a short label (see :data:`SCHEME_STYLE`), and a legend explains them.
Every piece of text is XML-escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from .adapter import BETWEEN_KERNELS, FUSED, LOAD, PlanView

#: Fill colours of kernels 0, 1, 2, ... (repeating).
PALETTE = (
    "#8ecae6", "#ffb703", "#90be6d", "#f28482", "#b8b8ff",
    "#f6bd60", "#84a59d", "#f5cac3", "#a3c4f3", "#cdb4db",
)
#: scheme -> (stroke colour, dash pattern, width, short label)
SCHEME_STYLE = {
    "register": ("#2b9348", "", 1.6, "reg"),
    "warp": ("#1d4ed8", "6 3", 1.8, "warp"),
    "shared": ("#d97706", "2 3", 2.2, "smem"),
    "global": ("#b91c1c", "8 3 2 3", 2.2, "gmem+sync"),
    BETWEEN_KERNELS: ("#6b7280", "4 4", 1.4, "HBM"),
    FUSED: ("#7c3aed", "1 2", 1.8, "fused"),
    LOAD: ("#9ca3af", "", 1.0, ""),
}
SCHEME_TITLES = {
    "register": "register: same thread",
    "warp": "warp shuffle",
    "shared": "shared memory (block)",
    "global": "global memory + grid barrier",
    BETWEEN_KERNELS: "between kernels (GPU memory)",
    FUSED: "same kernel, scheme chosen when scheduled",
    LOAD: "read from an input array",
}

NODE_W, NODE_H = 132, 40
GAP_X, GAP_Y = 18, 52
VIRTUAL_W = 14
GUTTER_W = 200
MARGIN = 16
LEGEND_H = 26
#: Graphs with more nodes than this are not drawn (the kernel table still is).
MAX_NODES = 250


def kernel_colour(index: int | None) -> str:
    """The fill colour of kernel ``index`` (inputs and constants: light grey)."""
    return "#e5e7eb" if index is None else PALETTE[index % len(PALETTE)]


def _fmt_us(us: float | None) -> str:
    if us is None:
        return "no estimate"
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.1f} µs" if us >= 10 else f"{us:.2f} µs"


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ",".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _dtype_short(dtype: str) -> str:
    return {"float32": "f32", "float16": "f16", "float64": "f64", "bool": "bool"}.get(
        dtype, dtype.replace("uint", "u").replace("int", "i")
    )


def _fit(text: str, width: int, char_w: float = 6.6) -> str:
    limit = max(4, int(width / char_w))
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Layout:
    """Where everything goes.

    Attributes:
        boxes: top-left corner of each node's box, by node id.
        routes: for each edge (by position in ``view.edges``), the points its line passes:
            the producer's bottom centre, one point per layer it crosses, the consumer's top centre.
        width, height: the extent of the drawing (without the gutter and legend).
    """

    boxes: dict[int, tuple[float, float]]
    routes: list[list[tuple[float, float]]]
    width: float
    height: float


def _layers(view: PlanView) -> dict[int, int]:
    preds: dict[int, list[int]] = {n.id: [] for n in view.nodes}
    succs: dict[int, list[int]] = {n.id: [] for n in view.nodes}
    for e in view.edges:
        preds[e.dst].append(e.src)
        succs[e.src].append(e.dst)
    layer: dict[int, int] = {}
    for n in view.nodes:  # producers come before their users
        layer[n.id] = 1 + max((layer[p] for p in preds[n.id]), default=-1)
    for n in view.nodes:  # an input sits just above its first reader, not at the very top
        if not preds[n.id] and succs[n.id]:
            layer[n.id] = max(0, min(layer[s] for s in succs[n.id]) - 1)
    return layer


def layout(view: PlanView) -> Layout:
    """A layered layout: layers by longest path, an ordering that keeps each kernel's nodes
    together and follows the producers, and a virtual slot in each layer a long edge crosses so
    no line runs through a box."""
    layer = _layers(view)
    kernel = {n.id: n.kernel for n in view.nodes}
    # slots: real nodes (their id >= 0) and virtual ones (negative ids), per layer
    slots: dict[int, list[int]] = {}
    width_of: dict[int, float] = {}
    preds: dict[int, list[int]] = {}
    succs: dict[int, list[int]] = {}
    group: dict[int, float] = {}
    for n in view.nodes:
        slots.setdefault(layer[n.id], []).append(n.id)
        width_of[n.id] = NODE_W
        preds.setdefault(n.id, [])
        succs.setdefault(n.id, [])
    chains: list[list[int]] = []
    next_virtual = -1
    for e in view.edges:
        chain = [e.src]
        for depth in range(layer[e.src] + 1, layer[e.dst]):
            v = next_virtual
            next_virtual -= 1
            slots.setdefault(depth, []).append(v)
            width_of[v] = VIRTUAL_W
            preds[v], succs[v] = [], []
            kernel[v] = kernel[e.dst] if kernel[e.dst] is not None else kernel[e.src]
            chain.append(v)
        chain.append(e.dst)
        for a, b in zip(chain, chain[1:], strict=False):
            succs[a].append(b)
            preds[b].append(a)
        chains.append(chain)
    for nid, k in kernel.items():
        if k is None:  # an input: just before the first kernel that reads it
            users = [kernel[s] for s in succs[nid] if kernel[s] is not None]
            group[nid] = (min(users) if users else 10**6) - 0.5
        else:
            group[nid] = float(k)

    order: dict[int, float] = {}
    depths = sorted(slots)
    for sweep in range(3):  # down, up, down: order by kernel, then by neighbours' mean position
        seq = depths if sweep != 1 else depths[::-1]
        for depth in seq:
            ids = slots[depth]
            near = preds if sweep != 1 else succs

            def bary(nid: int, near: dict[int, list[int]] = near) -> float:
                ps = [order[p] for p in near[nid] if p in order]
                return sum(ps) / len(ps) if ps else order.get(nid, 0.0)

            ids.sort(key=lambda nid: (group[nid], bary(nid)))
            for i, nid in enumerate(ids):
                order[nid] = float(i)

    # x: start packed, then move each slot towards its neighbours' centres without overlapping
    centre: dict[int, float] = {}
    for depth in depths:
        x = 0.0
        for nid in slots[depth]:
            centre[nid] = x + width_of[nid] / 2
            x += width_of[nid] + GAP_X
    for sweep in range(4):
        seq = depths if sweep % 2 == 0 else depths[::-1]
        near = preds if sweep % 2 == 0 else succs
        for depth in seq:
            ids = slots[depth]
            want = []
            for nid in ids:
                cs = [centre[p] for p in near[nid]]
                want.append(sum(cs) / len(cs) if cs else centre[nid])
            _place(ids, want, width_of, centre)
    left = min(centre[n] - width_of[n] / 2 for n in centre)
    boxes = {}
    y_of = {depth: MARGIN + 22 + depth * (NODE_H + GAP_Y) for depth in depths}
    for n in view.nodes:
        boxes[n.id] = (centre[n.id] - left - NODE_W / 2 + MARGIN, y_of[layer[n.id]])
    routes = []
    vlayer = {v: d for d in depths for v in slots[d] if v < 0}
    for chain in chains:
        src, dst = chain[0], chain[-1]
        pts = [(boxes[src][0] + NODE_W / 2, boxes[src][1] + NODE_H)]
        for v in chain[1:-1]:
            x = centre[v] - left + MARGIN
            pts.append((x, y_of[vlayer[v]]))
            pts.append((x, y_of[vlayer[v]] + NODE_H))
        pts.append((boxes[dst][0] + NODE_W / 2, boxes[dst][1]))
        routes.append(pts)
    width = max(centre[n] + width_of[n] / 2 for n in centre) - left + 2 * MARGIN
    height = max(y_of.values()) + NODE_H + MARGIN
    return Layout(boxes, routes, width, height)


def _place(ids: list[int], want: list[float], width_of: dict[int, float], centre: dict[int, float]) -> None:
    """Put slots as near ``want`` as their order and spacing allow (left to right, then back)."""
    pos = list(want)
    for i in range(1, len(ids)):
        gap = (width_of[ids[i - 1]] + width_of[ids[i]]) / 2 + GAP_X
        pos[i] = max(pos[i], pos[i - 1] + gap)
    # shift the whole row left by the mean overshoot, so one wide neighbour does not push everything right
    overshoot = sum(p - w for p, w in zip(pos, want, strict=True)) / len(ids) if ids else 0.0
    pos = [p - overshoot / 2 for p in pos]
    for i in range(1, len(ids)):
        gap = (width_of[ids[i - 1]] + width_of[ids[i]]) / 2 + GAP_X
        pos[i] = max(pos[i], pos[i - 1] + gap)
    for nid, p in zip(ids, pos, strict=True):
        centre[nid] = p


def plan_svg(view: PlanView, scale: float = 1.0) -> str:
    """The SVG picture of ``view`` as a string (to inline in HTML); ``scale`` shrinks or grows it."""
    if len(view.nodes) > MAX_NODES:
        return (
            f'<div class="sl-note">graph not drawn: {len(view.nodes)} nodes '
            f"(more than {MAX_NODES}); the kernel table below lists every kernel</div>"
        )
    if not view.nodes:
        return '<div class="sl-note">empty graph</div>'
    lay = layout(view)
    gutter = GUTTER_W if view.kernels else 0
    legend, legend_w = _legend(view, lay.height + 4)
    width = int(max(lay.width + gutter, legend_w + 2 * MARGIN, 320))
    height = int(lay.height + LEGEND_H + 6)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sl-plan-svg" width="{width * scale:.0f}" height="{height * scale:.0f}" '
        f'viewBox="0 0 {width} {height}" font-family="ui-sans-serif, system-ui, sans-serif" font-size="11">',
        "<defs>"
        + "".join(
            f'<marker id="sl-arrow-{i}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{style[0]}"/></marker>'
            for i, style in enumerate(SCHEME_STYLE.values())
        )
        + "</defs>",
        f'<g transform="translate({gutter},0)">',
    ]
    marker_of = {scheme: f"sl-arrow-{i}" for i, scheme in enumerate(SCHEME_STYLE)}
    parts += _kernel_regions(view, lay.boxes)
    parts += _edges(view, lay.routes, marker_of)
    parts += _nodes(view, lay.boxes)
    parts.append("</g>")
    parts += _gutter_labels(view, lay.boxes)
    parts.append(legend)
    parts.append("</svg>")
    return "".join(parts)


def _kernel_regions(view: PlanView, pos: dict[int, tuple[float, float]]) -> list[str]:
    """One translucent region per kernel: a rectangle per layer, bridged across layer gaps."""
    out = []
    pad = 8
    for k in view.kernels:
        boxes: dict[float, tuple[float, float]] = {}
        for nid in k.nodes:
            if nid not in pos:
                continue
            x, y = pos[nid]
            lo, hi = boxes.get(y, (x, x + NODE_W))
            boxes[y] = (min(lo, x), max(hi, x + NODE_W))
        if not boxes:
            continue
        ys = sorted(boxes)
        rects = []
        for i, y in enumerate(ys):
            lo, hi = boxes[y]
            rects.append((lo - pad, y - pad, hi - lo + 2 * pad, NODE_H + 2 * pad))
            if i + 1 < len(ys) and ys[i + 1] - y <= NODE_H + GAP_Y + 1:  # the kernel goes on below
                nlo, nhi = boxes[ys[i + 1]]
                blo, bhi = max(lo, nlo), min(hi, nhi)
                if blo >= bhi:  # no overlap: bridge the whole span
                    blo, bhi = min(lo, nlo), max(hi, nhi)
                top = y + NODE_H  # overlaps both rows, so the rounded corners leave no notch
                rects.append((blo - pad, top, bhi - blo + 2 * pad, ys[i + 1] - top))
        title = escape(f"kernel {k.index}: {k.name} — {k.schedule or 'no schedule'} — {_fmt_us(k.estimated_us)}")
        out.append(
            f'<g class="sl-kernel" data-kernel="{k.index}"><title>{title}</title>'
            f'<g opacity="0.30" fill="{kernel_colour(k.index)}">'
        )
        out += [f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="8"/>' for x, y, w, h in rects]
        out.append("</g></g>")
    return out


def _gutter_labels(view: PlanView, pos: dict[int, tuple[float, float]]) -> list[str]:
    """Each kernel's number, estimated time, name and schedule in the left gutter, level with
    its first row (moved down where two kernels start on the same row)."""
    out = []
    taken: list[float] = []
    width = GUTTER_W - MARGIN - 8
    for k in view.kernels:
        ys = [pos[n][1] for n in k.nodes if n in pos]
        if not ys:
            continue
        y = min(ys) - 2
        while any(abs(y - t) < 46 for t in taken):
            y += 46
        taken.append(y)
        schedule = k.schedule.split("(")[0] if k.schedule else ""
        out.append(
            f'<g class="sl-kernel-label" data-kernel="{k.index}">'
            f'<rect x="{MARGIN - 4}" y="{y:.1f}" width="{width}" height="44" rx="4" '
            f'fill="{kernel_colour(k.index)}" fill-opacity="0.45"/>'
            f'<text x="{MARGIN + 2}" y="{y + 13:.1f}" font-weight="600" fill="#111827">'
            f"{escape(_fit(f'kernel {k.index}' + (f' · {_fmt_us(k.estimated_us)}' if k.estimated_us is not None else ''), width - 8))}</text>"
            f'<text x="{MARGIN + 2}" y="{y + 26:.1f}" font-size="9.5" font-family="ui-monospace, monospace" fill="#111827">'
            f"{escape(_fit(k.name, width - 8, 5.9))}</text>"
            f'<text x="{MARGIN + 2}" y="{y + 39:.1f}" font-size="9.5" fill="#374151">'
            f"{escape(_fit(schedule, width - 8, 5.6))}</text></g>"
        )
    return out


def _path(points: list[tuple[float, float]]) -> str:
    """A smooth line through ``points`` (vertical tangents at each point)."""
    (x0, y0) = points[0]
    d = [f"M {x0:.1f} {y0:.1f}"]
    for (xa, ya), (xb, yb) in zip(points, points[1:], strict=False):
        if abs(xa - xb) < 0.5:
            d.append(f"L {xb:.1f} {yb:.1f}")
        else:
            mid = (ya + yb) / 2
            d.append(f"C {xa:.1f} {mid:.1f}, {xb:.1f} {mid:.1f}, {xb:.1f} {yb:.1f}")
    return " ".join(d)


def _edges(view: PlanView, routes: list[list[tuple[float, float]]], marker_of: dict[str, str]) -> list[str]:
    out = []
    labels = []
    for e, pts in zip(view.edges, routes, strict=True):
        colour, dash, width, short = SCHEME_STYLE.get(e.scheme, ("#374151", "", 1.2, e.scheme))
        pts = pts[:-1] + [(pts[-1][0], pts[-1][1] - 1)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        title = escape(SCHEME_TITLES.get(e.scheme, e.scheme))
        out.append(
            f'<path class="sl-edge" data-scheme="{escape(e.scheme)}" d="{_path(pts)}" fill="none" stroke="{colour}" '
            f'stroke-width="{width}"{dash_attr} marker-end="url(#{marker_of.get(e.scheme, "sl-arrow-0")})">'
            f"<title>{title}</title></path>"
        )
        if short and e.scheme != "register":  # register is the plain solid line; label the others
            (xa, ya), (xb, yb) = pts[0], pts[1]
            lx, ly = (xa + xb) / 2, (ya + yb) / 2
            w = 6.0 * len(short) + 8
            labels.append(
                f'<g class="sl-edge-label"><rect x="{lx - w / 2:.1f}" y="{ly - 7:.1f}" width="{w:.1f}" height="13" '
                f'rx="3" fill="white" fill-opacity="0.92" stroke="{colour}" stroke-width="0.6"/>'
                f'<text x="{lx:.1f}" y="{ly + 3:.1f}" text-anchor="middle" font-size="9.5" fill="{colour}">'
                f"{escape(short)}</text></g>"
            )
    return out + labels


def _nodes(view: PlanView, pos: dict[int, tuple[float, float]]) -> list[str]:
    out = []
    for n in view.nodes:
        x, y = pos[n.id]
        fill = kernel_colour(n.kernel)
        stroke = "#111827" if n.output else "#4b5563"
        sw = 2.4 if n.output else 1
        rx = 18 if n.kind == "input" else (3 if n.kind == "reduce" else 6)
        title = escape(
            f"{n.op} {_shape(n.shape)} {n.dtype}"
            + (f" — kernel {n.kernel}" if n.kernel is not None else "")
            + (" — output" if n.output else "")
        )
        line2 = f"{_dtype_short(n.dtype)}{_shape(n.shape)}" + ("  → out" if n.output else "")
        weight = ' font-weight="700"' if n.kind == "reduce" else ""
        out.append(
            f'<g class="sl-node" data-op="{escape(n.op)}" data-kernel="{"" if n.kernel is None else n.kernel}">'
            f"<title>{title}</title>"
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{NODE_W}" height="{NODE_H}" rx="{rx}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="{sw}"/>'
            f'<text x="{x + NODE_W / 2:.1f}" y="{y + 16:.1f}" text-anchor="middle"{weight} fill="#111827">'
            f"{escape(_fit(n.label, NODE_W - 8))}</text>"
            f'<text x="{x + NODE_W / 2:.1f}" y="{y + 31:.1f}" text-anchor="middle" font-size="9.5" fill="#374151">'
            f"{escape(_fit(line2, NODE_W - 8, 5.8))}</text></g>"
        )
    return out


def _legend(view: PlanView, y: float) -> tuple[str, float]:
    """The line styles in use, with their meaning; returns the SVG and its width."""
    used = [sc for sc in SCHEME_STYLE if any(e.scheme == sc for e in view.edges) and sc != LOAD]
    x = float(MARGIN)
    items = []
    for scheme in used:
        colour, dash, width, short = SCHEME_STYLE[scheme]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        text = f"{short}: {SCHEME_TITLES[scheme]}"
        items.append(
            f'<line x1="{x:.0f}" y1="{y + 8:.0f}" x2="{x + 26:.0f}" y2="{y + 8:.0f}" stroke="{colour}" stroke-width="{width}"{dash_attr}/>'
            f'<text x="{x + 32:.0f}" y="{y + 12:.0f}" fill="#374151">{escape(text)}</text>'
        )
        x += 32 + 6.1 * len(text) + 18
    return '<g class="sl-legend">' + "".join(items) + "</g>", x
