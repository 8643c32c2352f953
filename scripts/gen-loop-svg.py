#!/usr/bin/env python3
"""Render docs/loop.txt (boxes and arrows, described in its header) as docs/loop.svg.

    scripts/gen-loop-svg.py [SOURCE] [-o OUT]

SOURCE defaults to docs/loop.txt and OUT to docs/loop.svg, both beside this script's repository. The output
depends only on the source (no dates, no environment), so tests/integration/test_docs.py can check that the
committed SVG is what the source gives. Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
INK = "#1f2937"
MUTED = "#4b5563"
BOX_FILL, BOX_STROKE = "#f3f6fb", "#40506b"
ACCENT_FILL, ACCENT_STROKE = "#e3eefc", "#1d5fbf"
GROUP_STROKE = "#8b95a7"
ARROW = "#374151"


@dataclass
class Box:
    id: str
    title: str
    subtitle: str
    x: float
    y: float
    w: float
    h: float
    accent: bool = False

    def port(self, side: str, frac: float) -> tuple[float, float]:
        if side == "top":
            return self.x + self.w * frac, self.y
        if side == "bottom":
            return self.x + self.w * frac, self.y + self.h
        if side == "left":
            return self.x, self.y + self.h * frac
        if side == "right":
            return self.x + self.w, self.y + self.h * frac
        raise ValueError(f"unknown side '{side}' (top, bottom, left, right)")


@dataclass
class Arrow:
    src: tuple[str, str, float]
    dst: tuple[str, str, float]
    labels: list[str]
    place: str = "above"
    dashed: bool = False


@dataclass
class Group:
    label: str
    x: float
    y: float
    w: float
    h: float


@dataclass
class Picture:
    width: float = 800
    height: float = 600
    title: str = ""
    boxes: dict[str, Box] = field(default_factory=dict)
    arrows: list[Arrow] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)


def _xy(text: str, sep: str, what: str, lineno: int) -> tuple[float, float]:
    parts = text.split(sep)
    if len(parts) != 2:
        raise SystemExit(f"line {lineno}: {what} must be A{sep}B, not '{text}'")
    return float(parts[0]), float(parts[1])


def _port(text: str, pic: Picture, lineno: int) -> tuple[str, str, float]:
    m = re.fullmatch(r"([A-Za-z_][\w-]*)\.(top|bottom|left|right)(?::([0-9.]+))?", text)
    if not m:
        raise SystemExit(f"line {lineno}: '{text}' is not ID.SIDE[:FRACTION]")
    if m.group(1) not in pic.boxes:
        raise SystemExit(f"line {lineno}: no box '{m.group(1)}' (define boxes before arrows)")
    frac = float(m.group(3)) if m.group(3) else 0.5
    if not 0 <= frac <= 1:
        raise SystemExit(f"line {lineno}: fraction {frac} is not between 0 and 1")
    return m.group(1), m.group(2), frac


def parse(source: str) -> Picture:
    pic = Picture()
    for lineno, raw in enumerate(source.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        words = shlex.split(line)
        kind, args = words[0], words[1:]
        try:
            if kind == "canvas":
                pic.width, pic.height = float(args[0]), float(args[1])
            elif kind == "title":
                pic.title = args[0]
            elif kind == "box":
                # box ID "TITLE" "SUBTITLE" at X,Y size WxH [accent]
                bid, title, subtitle = args[0], args[1], args[2]
                if args[3] != "at" or args[5] != "size":
                    raise SystemExit(f"line {lineno}: expected: box ID \"TITLE\" \"SUBTITLE\" at X,Y size WxH")
                x, y = _xy(args[4], ",", "a position", lineno)
                w, h = _xy(args[6], "x", "a size", lineno)
                if bid in pic.boxes:
                    raise SystemExit(f"line {lineno}: box '{bid}' defined twice")
                pic.boxes[bid] = Box(bid, title, subtitle, x, y, w, h, accent="accent" in args[7:])
            elif kind == "group":
                label = args[0]
                if args[1] != "at" or args[3] != "size":
                    raise SystemExit(f"line {lineno}: expected: group \"LABEL\" at X,Y size WxH")
                x, y = _xy(args[2], ",", "a position", lineno)
                w, h = _xy(args[4], "x", "a size", lineno)
                pic.groups.append(Group(label, x, y, w, h))
            elif kind == "arrow":
                if args[1] != "->":
                    raise SystemExit(f"line {lineno}: expected: arrow ID.SIDE -> ID.SIDE \"LABEL\" ...")
                arrow = Arrow(_port(args[0], pic, lineno), _port(args[2], pic, lineno), [])
                for word in args[3:]:
                    if word in ("above", "below", "left", "right"):
                        arrow.place = word
                    elif word == "dashed":
                        arrow.dashed = True
                    else:
                        arrow.labels.append(word)
                if len(arrow.labels) > 2:
                    raise SystemExit(f"line {lineno}: an arrow takes a label and at most one note")
                pic.arrows.append(arrow)
            else:
                raise SystemExit(f"line {lineno}: unknown statement '{kind}' (canvas, title, box, group, arrow)")
        except (IndexError, ValueError) as e:
            raise SystemExit(f"line {lineno}: cannot read '{line}': {e}")
    return pic


def num(v: float) -> str:
    """Numbers as the SVG writes them: integers bare, others with one decimal."""
    r = round(v, 1)
    return str(int(r)) if r == int(r) else f"{r:.1f}"


def esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def text_el(x: float, y: float, s: str, size: float, *, anchor: str = "middle", weight: str = "normal",
            fill: str = INK, style: str = "normal") -> str:
    extra = "" if style == "normal" else f' font-style="{style}"'
    return (f'<text x="{num(x)}" y="{num(y)}" font-size="{num(size)}" font-weight="{weight}"{extra} '
            f'text-anchor="{anchor}" fill="{fill}">{esc(s)}</text>')


def render(pic: Picture) -> str:
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<!-- Generated by scripts/gen-loop-svg.py from docs/loop.txt: edit that file, then rerun the script. -->',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{num(pic.width)}" height="{num(pic.height)}" '
        f'viewBox="0 0 {num(pic.width)} {num(pic.height)}" font-family="{FONT}" role="img" '
        f'aria-label="{esc(pic.title)}">',
        f"<title>{esc(pic.title)}</title>",
        "<defs>",
        f'<marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" '
        f'orient="auto-start-reverse" markerUnits="userSpaceOnUse"><path d="M0,0 L10,5 L0,10 z" fill="{ARROW}"/>'
        f"</marker>",
        "</defs>",
        f'<rect x="0" y="0" width="{num(pic.width)}" height="{num(pic.height)}" fill="#ffffff"/>',
    ]
    if pic.title:
        out.append(text_el(pic.width / 2, 32, pic.title, 18, weight="bold"))
    for g in pic.groups:
        out.append(f'<rect x="{num(g.x)}" y="{num(g.y)}" width="{num(g.w)}" height="{num(g.h)}" rx="14" '
                   f'fill="none" stroke="{GROUP_STROKE}" stroke-width="1.5" stroke-dasharray="7 5"/>')
        out.append(text_el(g.x + 14, g.y + 22, g.label, 12.5, anchor="start", fill=MUTED, style="italic"))
    for b in pic.boxes.values():
        fill, stroke = (ACCENT_FILL, ACCENT_STROKE) if b.accent else (BOX_FILL, BOX_STROKE)
        out.append(f'<rect x="{num(b.x)}" y="{num(b.y)}" width="{num(b.w)}" height="{num(b.h)}" rx="10" '
                   f'fill="{fill}" stroke="{stroke}" stroke-width="2"/>')
        cx = b.x + b.w / 2
        if b.subtitle:
            out.append(text_el(cx, b.y + b.h / 2 - 4, b.title, 16, weight="bold"))
            out.append(text_el(cx, b.y + b.h / 2 + 18, b.subtitle, 12.5, fill=MUTED))
        else:
            out.append(text_el(cx, b.y + b.h / 2 + 6, b.title, 16, weight="bold"))
    for a in pic.arrows:
        x1, y1 = pic.boxes[a.src[0]].port(a.src[1], a.src[2])
        x2, y2 = pic.boxes[a.dst[0]].port(a.dst[1], a.dst[2])
        dash = ' stroke-dasharray="6 4"' if a.dashed else ""
        out.append(f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" stroke="{ARROW}" '
                   f'stroke-width="2"{dash} marker-end="url(#head)"/>')
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2
        label, note = (a.labels + ["", ""])[:2]
        if a.place == "above":
            rows = [(mx, my - 26, "middle"), (mx, my - 10, "middle")] if note else [(mx, my - 10, "middle")]
        elif a.place == "below":
            rows = [(mx, my + 21, "middle"), (mx, my + 37, "middle")]
        else:
            # Beside a sloping line the text must clear it at every height it spans (baselines - 14 to + 4).
            ys = (my - 3, my + 13) if note else (my + 5,)

            def line_x(y: float) -> float:
                return mx if y1 == y2 else x1 + (x2 - x1) * (y - y1) / (y2 - y1)

            xs = [line_x(y) for row_y in ys for y in (row_y - 14, row_y + 4)]
            if a.place == "left":
                ax, anchor = min(xs) - 12, "end"
            else:
                ax, anchor = max(xs) + 12, "start"
            rows = [(ax, y, anchor) for y in ys]
        if label:
            x, y, anchor = rows[0]
            out.append(text_el(x, y, label, 14, anchor=anchor, weight="bold"))
        if note:
            x, y, anchor = rows[1]
            out.append(text_el(x, y, note, 12, anchor=anchor, fill=MUTED, style="italic"))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", nargs="?", default=str(REPO / "docs" / "loop.txt"))
    ap.add_argument("-o", "--output", default=str(REPO / "docs" / "loop.svg"))
    args = ap.parse_args(argv)
    svg = render(parse(Path(args.source).read_text(encoding="utf-8")))
    Path(args.output).write_text(svg, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
