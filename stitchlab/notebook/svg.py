"""The plan picture: an SVG drawing of a :class:`~.adapter.PlanView`, made here (no graphviz).

Layout: nodes go into layers by their longest path from an input (top to bottom); within a
layer they are ordered by kernel, then by the mean position of their producers, so the nodes
of one kernel sit side by side. Each kernel's nodes are filled in the kernel's colour and
covered by one translucent region labelled with its name and estimated time. Each edge is
drawn in the style of its stitching scheme and labelled with it (see :data:`SCHEME_STYLE`).
Every piece of text is XML-escaped.
"""

from __future__ import annotations

from html import escape

from .adapter import BETWEEN_KERNELS, LOAD, PlanView

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
    LOAD: ("#9ca3af", "", 1.0, ""),
}
SCHEME_TITLES = {
    "register": "register: same thread",
    "warp": "warp shuffle",
    "shared": "shared memory (block)",
    "global": "global memory + grid barrier",
    BETWEEN_KERNELS: "between kernels: written to and read from GPU memory",
    LOAD: "read from an input array",
}

NODE_W, NODE_H = 132, 40
GAP_X, GAP_Y = 22, 58
MARGIN = 16
LEGEND_H = 30
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


def layout(view: PlanView) -> dict[int, tuple[float, float]]:
    """Top-left corner of each node's box, by node id (a simple layered layout)."""
    preds: dict[int, list[int]] = {n.id: [] for n in view.nodes}
    for e in view.edges:
        preds[e.dst].append(e.src)
    layer: dict[int, int] = {}
    for n in view.nodes:  # nodes come inputs first
        layer[n.id] = 1 + max((layer[p] for p in preds[n.id]), default=-1)
    # pull inputs down next to their first user (an input read late should not sit at the top)
    succs: dict[int, list[int]] = {n.id: [] for n in view.nodes}
    for e in view.edges:
        succs[e.src].append(e.dst)
    for n in view.nodes:
        if not preds[n.id] and succs[n.id]:
            layer[n.id] = max(0, min(layer[s] for s in succs[n.id]) - 1)
    kernel = {n.id: n.kernel for n in view.nodes}
    layers: dict[int, list[int]] = {}
    for n in view.nodes:
        layers.setdefault(layer[n.id], []).append(n.id)

    pos_in_layer: dict[int, float] = {}
    big = 10**6

    def group_key(nid: int) -> float:
        k = kernel[nid]
        if k is None:  # an input: next to the first kernel that reads it
            users = [kernel[s] for s in succs[nid] if kernel[s] is not None]
            k = min(users) if users else big
            return k - 0.5
        return float(k)

    for depth in sorted(layers):
        ids = layers[depth]

        def bary(nid: int) -> float:
            ps = [pos_in_layer[p] for p in preds[nid] if p in pos_in_layer]
            return sum(ps) / len(ps) if ps else float(nid)

        ids.sort(key=lambda nid: (group_key(nid), bary(nid), nid))
        for i, nid in enumerate(ids):
            pos_in_layer[nid] = float(i)

    width_slots = max(len(ids) for ids in layers.values()) if layers else 1
    positions: dict[int, tuple[float, float]] = {}
    for depth, ids in layers.items():
        offset = (width_slots - len(ids)) * (NODE_W + GAP_X) / 2
        for i, nid in enumerate(ids):
            x = MARGIN + offset + i * (NODE_W + GAP_X)
            y = MARGIN + 20 + depth * (NODE_H + GAP_Y)
            positions[nid] = (x, y)
    return positions


def plan_svg(view: PlanView, scale: float = 1.0) -> str:
    """The SVG picture of ``view`` as a string (to inline in HTML); ``scale`` shrinks or grows it."""
    if len(view.nodes) > MAX_NODES:
        return (
            f'<div class="sl-note">graph not drawn: {len(view.nodes)} nodes '
            f"(more than {MAX_NODES}); the kernel table below lists every kernel</div>"
        )
    pos = layout(view)
    if not pos:
        return '<div class="sl-note">empty graph</div>'
    width = int(max(x for x, _ in pos.values()) + NODE_W + MARGIN)
    width = max(width, 560)
    height = int(max(y for _, y in pos.values()) + NODE_H + MARGIN + LEGEND_H + 10)
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
    ]
    marker_of = {scheme: f"sl-arrow-{i}" for i, scheme in enumerate(SCHEME_STYLE)}
    parts += _kernel_regions(view, pos)
    parts += _edges(view, pos, marker_of)
    parts += _nodes(view, pos)
    parts.append(_legend(view, height - LEGEND_H + 4))
    parts.append("</svg>")
    return "".join(parts)


def _kernel_regions(view: PlanView, pos: dict[int, tuple[float, float]]) -> list[str]:
    """One translucent region per kernel: a rectangle per layer, joined across layer gaps."""
    out = []
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
        colour = kernel_colour(k.index)
        ys = sorted(boxes)
        rects = []
        pad = 8
        for i, y in enumerate(ys):
            lo, hi = boxes[y]
            top = y - pad - (14 if i == 0 else 0)
            bottom = y + NODE_H + pad
            if i + 1 < len(ys) and ys[i + 1] - y <= NODE_H + GAP_Y + 1:  # next layer of the same kernel
                nlo, nhi = boxes[ys[i + 1]]
                bottom = ys[i + 1] - pad
                # a bridge as wide as the overlap (or a narrow strip) keeps the region connected
                blo, bhi = max(lo, nlo), min(hi, nhi)
                if blo >= bhi:
                    blo, bhi = min(lo, nlo), max(hi, nhi)
                rects.append((blo - pad, bottom, bhi - blo + 2 * pad, ys[i + 1] - bottom))
                bottom = y + NODE_H + pad
            rects.append((lo - pad, top, hi - lo + 2 * pad, bottom - top))
        title = escape(f"kernel {k.index}: {k.name} — {k.schedule or 'no schedule'} — {_fmt_us(k.estimated_us)}")
        out.append(f'<g class="sl-kernel" data-kernel="{k.index}"><title>{title}</title><g opacity="0.28">')
        out += [
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="8" fill="{colour}"/>'
            for x, y, w, h in rects
        ]
        out.append("</g>")
        lo, _ = boxes[ys[0]]
        label = f"k{k.index} {k.name} · {_fmt_us(k.estimated_us)}"
        out.append(
            f'<text x="{lo - pad + 6:.1f}" y="{ys[0] - pad - 3:.1f}" font-weight="600" fill="#111827">'
            f"{escape(_fit(label, 420))}</text></g>"
        )
    return out


def _edges(view: PlanView, pos: dict[int, tuple[float, float]], marker_of: dict[str, str]) -> list[str]:
    out = []
    labels = []
    for e in view.edges:
        if e.src not in pos or e.dst not in pos:
            continue
        colour, dash, width, short = SCHEME_STYLE.get(e.scheme, ("#374151", "", 1.2, e.scheme))
        x1, y1 = pos[e.src]
        x2, y2 = pos[e.dst]
        sx, sy = x1 + NODE_W / 2, y1 + NODE_H
        tx, ty = x2 + NODE_W / 2, y2
        mid = (sy + ty) / 2
        path = f"M {sx:.1f} {sy:.1f} C {sx:.1f} {mid:.1f}, {tx:.1f} {mid:.1f}, {tx:.1f} {ty - 1:.1f}"
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        title = escape(SCHEME_TITLES.get(e.scheme, e.scheme))
        out.append(
            f'<path class="sl-edge" data-scheme="{escape(e.scheme)}" d="{path}" fill="none" stroke="{colour}" '
            f'stroke-width="{width}"{dash_attr} marker-end="url(#{marker_of.get(e.scheme, "sl-arrow-0")})">'
            f"<title>{title}</title></path>"
        )
        if short:
            lx, ly = (sx + tx) / 2, mid
            w = 6.2 * len(short) + 6
            labels.append(
                f'<g class="sl-edge-label"><rect x="{lx - w / 2:.1f}" y="{ly - 7:.1f}" width="{w:.1f}" height="13" '
                f'rx="3" fill="white" fill-opacity="0.9" stroke="{colour}" stroke-width="0.6"/>'
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


def _legend(view: PlanView, y: float) -> str:
    used = [s for s in SCHEME_STYLE if any(e.scheme == s for e in view.edges) and SCHEME_STYLE[s][3]]
    x = MARGIN
    items = []
    for scheme in used:
        colour, dash, width, short = SCHEME_STYLE[scheme]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        text = SCHEME_TITLES[scheme] if scheme != BETWEEN_KERNELS else "HBM: between kernels"
        items.append(
            f'<line x1="{x}" y1="{y + 8}" x2="{x + 26}" y2="{y + 8}" stroke="{colour}" stroke-width="{width}"{dash_attr}/>'
            f'<text x="{x + 32}" y="{y + 12}" fill="#374151">{escape(short)} = {escape(text)}</text>'
        )
        x += 44 + int(6.0 * (len(short) + len(text) + 3))
    return '<g class="sl-legend">' + "".join(items) + "</g>"
