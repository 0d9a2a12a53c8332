"""Line charts as inline SVG, drawn on the server: no JavaScript, no CDN, every text
escaped.  A chart is a few lines (one per backend) over time; each point is a link to
its run and carries a tooltip (<title>) with the run id and value."""
from __future__ import annotations

import datetime
from html import escape
from typing import List, NamedTuple, Optional, Sequence

# Colour-blind-safe palette (Okabe-Ito), one per line in order.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")


class Point(NamedTuple):
    timestamp: str            # the service's UTC text
    value: Optional[float]
    href: str                 # where the point links to (already a safe relative URL)
    label: str                # tooltip text


class Line(NamedTuple):
    name: str
    points: Sequence[Point]


def _seconds(timestamp: str) -> float:
    # fromisoformat is C and fast (strptime is not); 3.8's cannot read the trailing 'Z'.
    moment = datetime.datetime.fromisoformat(timestamp.rstrip("Z"))
    return moment.replace(tzinfo=datetime.timezone.utc).timestamp()


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"


def line_chart(title: str, lines: Sequence[Line], width: int = 560, height: int = 200) -> str:
    """The SVG markup of one chart (an empty-data chart says so instead of drawing)."""
    left, right, top, bottom = 56, 12, 24, 30
    seconds = {p.timestamp: _seconds(p.timestamp) for line in lines for p in line.points}
    known = [(seconds[p.timestamp], p.value) for line in lines for p in line.points if p.value is not None]
    parts: List[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="{left}" y="16" class="chart-title">{escape(title)}</text>']
    if not known:
        parts.append(f'<text x="{left}" y="{height // 2}">no values recorded</text></svg>')
        return "".join(parts)
    xs, ys = [k[0] for k in known], [k[1] for k in known]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if y0 == y1:
        y0, y1 = y0 - 1, y1 + 1
    plot_w, plot_h = width - left - right, height - top - bottom

    def sx(x: float) -> float:
        return left + (plot_w * (x - x0) / (x1 - x0) if x1 > x0 else plot_w / 2)

    def sy(y: float) -> float:
        return top + plot_h - plot_h * (y - y0) / (y1 - y0)

    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" class="frame"/>')
    for y in (y0, y1):
        parts.append(f'<text x="{left - 4}" y="{sy(y) + 4:.1f}" text-anchor="end" class="tick">'
                     f'{escape(_fmt(y))}</text>')
    for x, anchor in ((x0, "start"), (x1, "end")):
        day = datetime.datetime.fromtimestamp(x, datetime.timezone.utc).strftime("%Y-%m-%d")
        parts.append(f'<text x="{sx(x):.1f}" y="{height - 10}" text-anchor="{anchor}" class="tick">{day}</text>')
    for index, line in enumerate(lines):
        colour = PALETTE[index % len(PALETTE)]
        drawn = [(sx(seconds[p.timestamp]), sy(p.value), p) for p in line.points if p.value is not None]
        if len(drawn) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in drawn)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        for x, y, p in drawn:
            parts.append(f'<a href="{escape(p.href)}"><circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" '
                         f'fill="{colour}"><title>{escape(p.label)}</title></circle></a>')
        parts.append(f'<text x="{left + 8 + 110 * index}" y="{top + 14}" fill="{colour}" '
                     f'class="legend">{escape(line.name)}</text>')
    parts.append("</svg>")
    return "".join(parts)
