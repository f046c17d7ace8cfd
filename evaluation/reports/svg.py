"""Small inline SVG charts for the report page, drawn on the server. Pure; every text is escaped."""

from collections.abc import Callable
from html import escape

COLOURS = ("#205493", "#c05d00", "#2e8540", "#7a2e8e")
_FONT = 'font-family="sans-serif" font-size="11"'


def interval_chart(rows: list[tuple[str, list]], series: list[str], *, title: str) -> str:
    """Dots with interval bars: rows of (label, [(value, low, high) or None for each series])."""
    width, left, right, top, line = 640, 110, 20, 34, 14
    band = line * max(1, len(series)) + 8
    height = top + band * len(rows) + 26 + 15 * len(series)
    points = [p for _, values in rows for p in values if p and p[0] is not None]
    low = min([0.0] + [min(p[0], p[1] if p[1] is not None else p[0]) for p in points])
    x = _scale(low, 1.0, left, width - right)
    parts = [_open(width, height, title), _text(width / 2, 16, title, anchor="middle", bold=True)]
    parts += _x_axis(x, low, 1.0, top, top + band * len(rows), ticks=_ticks(low, 1.0))
    for r, (label, values) in enumerate(rows):
        y0 = top + band * r + 6
        parts.append(_text(left - 6, y0 + band / 2, label, anchor="end"))
        for s, point in enumerate(values):
            y = y0 + line * s + line / 2
            if not point or point[0] is None:
                parts.append(_text(x(max(low, 0)) + 4, y + 4, "undefined", colour="#777"))
                continue
            value, lo, hi = point
            if lo is not None and hi is not None:
                parts.append(
                    f'<line x1="{x(lo):.1f}" y1="{y:.1f}" x2="{x(hi):.1f}" y2="{y:.1f}" '
                    f'stroke="{COLOURS[s]}" stroke-width="2"/>'
                )
            parts.append(
                f'<circle cx="{x(value):.1f}" cy="{y:.1f}" r="3.5" fill="{COLOURS[s]}">'
                f"<title>{escape(label)} {escape(series[s])}: {value:.3f}"
                + (f" [{lo:.3f}, {hi:.3f}]" if lo is not None else "")
                + "</title></circle>"
            )
    parts += _legend(series, left, top + band * len(rows) + 36)
    return "".join(parts) + "</svg>"


def histogram_chart(edges: list[float], counts: list[int], *, title: str) -> str:
    width, height, left, right, top, bottom = 640, 220, 50, 20, 30, 36
    peak = max(counts) if counts and max(counts) > 0 else 1
    x = _scale(edges[0], edges[-1], left, width - right)
    y = _scale(0, peak, height - bottom, top)
    parts = [_open(width, height, title), _text(width / 2, 16, title, anchor="middle", bold=True)]
    for i, count in enumerate(counts):
        x0, x1 = x(edges[i]), x(edges[i + 1])
        closing = "]" if i == len(counts) - 1 else ")"
        parts.append(
            f'<rect x="{x0 + 1:.1f}" y="{y(count):.1f}" width="{max(x1 - x0 - 2, 1):.1f}" '
            f'height="{y(0) - y(count):.1f}" fill="{COLOURS[0]}"><title>[{edges[i]:.2f}, '
            f"{edges[i + 1]:.2f}{closing}: {count} words</title></rect>"
        )
    parts += _x_axis(x, edges[0], edges[-1], top, height - bottom, ticks=[i / 10 for i in range(11)])
    parts.append(_text(left - 6, top + 4, f"{peak}", anchor="end"))
    parts.append(_text(left - 6, height - bottom, "0", anchor="end"))
    parts.append(_text(width / 2, height - 4, "scalar score (mean of 0 / 0.5 / 1)", anchor="middle"))
    return "".join(parts) + "</svg>"


def scatter_chart(points: list[tuple[float, float, bool, str]], *, title: str, x_label: str, y_label: str) -> str:
    """Points (x, y, flagged, label); flagged points are drawn as red crosses."""
    width, height, left, right, top, bottom = 640, 320, 50, 20, 30, 40
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x = _scale(0.0, max([0.5, *xs]), left, width - right)
    y_low = min([0.0, *ys])
    y = _scale(y_low, 1.0, height - bottom, top)
    parts = [_open(width, height, title), _text(width / 2, 16, title, anchor="middle", bold=True)]
    parts += _x_axis(x, 0.0, max([0.5, *xs]), top, height - bottom, ticks=_ticks(0.0, max([0.5, *xs])))
    for tick in _ticks(y_low, 1.0):
        parts.append(_text(left - 6, y(tick) + 4, f"{tick:g}", anchor="end"))
        parts.append(f'<line x1="{left}" y1="{y(tick):.1f}" x2="{width - right}" y2="{y(tick):.1f}" stroke="#eee"/>')
    for px, py, flagged, label in points:
        tip = f"<title>{escape(label)}: {x_label} {px:.3f}, {y_label} {py:.3f}{' (flagged)' if flagged else ''}</title>"
        if flagged:
            cx, cy = x(px), y(py)
            parts.append(
                f'<path d="M{cx - 4:.1f},{cy - 4:.1f}L{cx + 4:.1f},{cy + 4:.1f}M{cx - 4:.1f},{cy + 4:.1f}'
                f'L{cx + 4:.1f},{cy - 4:.1f}" stroke="#b00020" stroke-width="2">{tip}</path>'
            )
        else:
            parts.append(
                f'<circle cx="{x(px):.1f}" cy="{y(py):.1f}" r="3" fill="{COLOURS[0]}" fill-opacity="0.6">{tip}</circle>'
            )
    parts.append(_text(width / 2, height - 6, x_label, anchor="middle"))
    parts.append(_text(12, height / 2, y_label, anchor="middle", rotate=True))
    return "".join(parts) + "</svg>"


def heatmap_chart(
    rows: list[str], columns: list[str], cells: dict, *, title: str, row_label: str, column_label: str
) -> str:
    """A matrix of coloured cells: `cells[(row, column)]` is {"value", "low", "high"} (or missing);
    darker is higher, on a scale from min(0, lowest value) to 1. Each cell prints its value and
    shows its interval on hover."""
    cell_w, cell_h, left, top = 76, 34, 90, 62
    values = [entry["value"] for entry in cells.values() if entry and entry["value"] is not None]
    low = min([0.0, *values])
    caption = f"rows: {row_label}; colour from {low:g} (light) to 1 (dark)"
    # as wide as the grid, or as its title or caption where those are longer (a 2 x 2 matrix's
    # caption is wider than its cells: it was cut at the edge)
    width = max(
        left + cell_w * max(1, len(columns)) + 20, _text_width(title, bold=True) + 20, _text_width(caption) + 20
    )
    height = top + cell_h * max(1, len(rows)) + 34
    parts = [_open(width, height, title), _text(width / 2, 16, title, anchor="middle", bold=True)]
    parts.append(_text(left + cell_w * len(columns) / 2, 34, column_label, anchor="middle"))
    for c, column in enumerate(columns):
        parts.append(_text(left + cell_w * (c + 0.5), top - 8, column, anchor="middle"))
    for r, row in enumerate(rows):
        y = top + cell_h * r
        parts.append(_text(left - 6, y + cell_h / 2 + 4, row, anchor="end"))
        for c, column in enumerate(columns):
            parts.append(
                _heat_cell(
                    left + cell_w * c,
                    y,
                    cell_w,
                    cell_h,
                    cells.get((row, column)),
                    low,
                    f"{row_label} {row}, {column_label} {column}",
                )
            )
    parts.append(_text(10, height - 10, caption))
    return "".join(parts) + "</svg>"


def _text_width(text: str, *, bold: bool = False) -> float:
    """A generous estimate of a text's width in the charts' 11 px sans-serif (no font metrics on
    the server): about 0.62 em a character, more in bold."""
    return len(text) * (7.4 if bold else 6.8)


def _heat_cell(x: float, y: float, w: float, h: float, entry: dict | None, low: float, where: str) -> str:
    if not entry or entry["value"] is None:
        return (
            f'<rect x="{x + 1:.1f}" y="{y + 1:.1f}" width="{w - 2:.1f}" height="{h - 2:.1f}" fill="#f2f2f2">'
            f"<title>{escape(where)}: no result</title></rect>"
            + _text(x + w / 2, y + h / 2 + 4, "-", anchor="middle", colour="#777")
        )
    value, lo, hi = entry["value"], entry["low"], entry["high"]
    share = min(1.0, max(0.0, (value - low) / ((1.0 - low) or 1.0)))
    fill = _blend("#f7fbff", "#08306b", share)
    interval = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else ""
    few = entry.get("interval_undefined")  # too few clips: the value with an asterisk, the reason on hover
    if few:
        interval = f" (no interval: {few})"
    ink = "#fff" if share > 0.55 else "#222"
    return (
        f'<rect x="{x + 1:.1f}" y="{y + 1:.1f}" width="{w - 2:.1f}" height="{h - 2:.1f}" fill="{fill}">'
        f"<title>{escape(where)}: {value:.3f}{escape(interval)}</title></rect>"
        + _text(x + w / 2, y + h / 2 + 4, f"{value:.2f}{'*' if few else ''}", anchor="middle", colour=ink)
    )


def _blend(start: str, end: str, share: float) -> str:
    a = [int(start[i : i + 2], 16) for i in (1, 3, 5)]
    b = [int(end[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * share):02x}" for x, y in zip(a, b))


def curve_chart(
    series: list[tuple[str, list[tuple[float, float | None, float | None, float | None]]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
) -> str:
    """Lines through (x, value) points with vertical interval bars, one line per series:
    series = [(name, [(x, value, low, high), ...])]. Points without a value are left out."""
    width, left, right, top, plot_bottom = 640, 50, 20, 30, 240
    height = plot_bottom + 60 + 15 * len(series)  # axis labels, then the legend a line a series
    points = [p for _, line in series for p in line if p[1] is not None]
    xs = [p[0] for p in points] or [0.0, 100.0]
    y_low = min([0.0, *(p[2] if p[2] is not None else p[1] for p in points if p[1] is not None)])
    x = _scale(0.0, max(xs), left, width - right)
    y = _scale(y_low, 1.0, plot_bottom, top)
    parts = [_open(width, height, title), _text(width / 2, 16, title, anchor="middle", bold=True)]
    for tick in _ticks(y_low, 1.0):
        parts.append(_text(left - 6, y(tick) + 4, f"{tick:g}", anchor="end"))
        parts.append(f'<line x1="{left}" y1="{y(tick):.1f}" x2="{width - right}" y2="{y(tick):.1f}" stroke="#eee"/>')
    for tick in sorted(set(xs)):
        parts.append(_text(x(tick), plot_bottom + 14, f"{tick:g}", anchor="middle"))
    for s, (name, line) in enumerate(series):
        colour = COLOURS[s % len(COLOURS)]
        shown = [(px, value, lo, hi) for px, value, lo, hi in line if value is not None]
        if len(shown) > 1:
            path = " ".join(f"{x(px):.1f},{y(value):.1f}" for px, value, _, _ in shown)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        for px, value, lo, hi in shown:
            if lo is not None and hi is not None:
                parts.append(
                    f'<line x1="{x(px):.1f}" y1="{y(lo):.1f}" x2="{x(px):.1f}" y2="{y(hi):.1f}" '
                    f'stroke="{colour}" stroke-width="2" stroke-opacity="0.6"/>'
                )
            interval = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else ""
            parts.append(
                f'<circle cx="{x(px):.1f}" cy="{y(value):.1f}" r="3.5" fill="{colour}">'
                f"<title>{escape(name)} at {px:g}: {value:.3f}{interval}</title></circle>"
            )
    parts.append(_text(width / 2, plot_bottom + 30, x_label, anchor="middle"))
    parts.append(_text(12, plot_bottom / 2, y_label, anchor="middle", rotate=True))
    parts += _legend([name for name, _ in series], left, plot_bottom + 56)
    return "".join(parts) + "</svg>"


def roc_chart(series: list[tuple[str, list[float], list[float]]], *, title: str) -> str:
    """ROC curves: one line per series (name, false positive rates, true positive rates), on the
    unit square with the chance diagonal."""
    side, left, top = 300, 50, 30
    height = top + side + 50 + 15 * len(series)
    x = _scale(0.0, 1.0, left, left + side)
    y = _scale(0.0, 1.0, top + side, top)
    parts = [
        _open(left + side + 20, height, title),
        _text((left + side) / 2 + 10, 16, title, anchor="middle", bold=True),
    ]
    for tick in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        parts.append(_text(left - 6, y(tick) + 4, f"{tick:g}", anchor="end"))
        parts.append(_text(x(tick), top + side + 14, f"{tick:g}", anchor="middle"))
        parts.append(f'<line x1="{left}" y1="{y(tick):.1f}" x2="{left + side}" y2="{y(tick):.1f}" stroke="#eee"/>')
    parts.append(
        f'<line x1="{x(0):.1f}" y1="{y(0):.1f}" x2="{x(1):.1f}" y2="{y(1):.1f}" stroke="#999" stroke-dasharray="4 3"/>'
    )
    for s, (name, fpr, tpr) in enumerate(series):
        path = " ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in zip(fpr, tpr))
        parts.append(
            f'<polyline points="{path}" fill="none" stroke="{COLOURS[s % len(COLOURS)]}" stroke-width="1.8">'
            f"<title>{escape(name)}</title></polyline>"
        )
    parts.append(_text(left + side / 2, top + side + 30, "false positive rate", anchor="middle"))
    parts.append(_text(12, top + side / 2, "true positive rate", anchor="middle", rotate=True))
    parts += _legend([name for name, _, _ in series], left, top + side + 46)
    return "".join(parts) + "</svg>"


def _open(width: float, height: float, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(title)}">'
    )


def _scale(low: float, high: float, start: float, end: float) -> Callable[[float], float]:
    span = (high - low) or 1.0
    return lambda value: start + (value - low) / span * (end - start)


def _ticks(low: float, high: float) -> list[float]:
    step = 0.1 if high - low <= 1.2 else 0.2
    first = step * int(low / step - (0 if low >= 0 else 1 - 1e-9))
    ticks, value = [], first
    while value <= high + 1e-9:
        if value >= low - 1e-9:
            ticks.append(round(value, 10))
        value += step
    return ticks


def _x_axis(x, low, high, top, bottom, *, ticks) -> list[str]:
    parts = [f'<line x1="{x(low):.1f}" y1="{bottom}" x2="{x(high):.1f}" y2="{bottom}" stroke="#999"/>']
    for tick in ticks:
        parts.append(f'<line x1="{x(tick):.1f}" y1="{top}" x2="{x(tick):.1f}" y2="{bottom}" stroke="#eee"/>')
        parts.append(_text(x(tick), bottom + 13, f"{tick:g}", anchor="middle"))
    return parts


def _legend(series: list[str], left: float, y: float) -> list[str]:
    parts = []
    for s, name in enumerate(series):
        parts.append(f'<circle cx="{left:.1f}" cy="{y + 15 * s - 4:.1f}" r="4" fill="{COLOURS[s]}"/>')
        parts.append(_text(left + 8, y + 15 * s, name))
    return parts


def _text(x: float, y: float, text: str, *, anchor: str = "start", bold=False, colour="#333", rotate=False) -> str:
    weight = ' font-weight="bold"' if bold else ""
    turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{colour}" {_FONT}{weight}{turn}>'
        f"{escape(str(text))}</text>"
    )
