"""Read a Textual SVG screenshot back as plain text (for looking at snapshots)."""

from __future__ import annotations

import html
import re
import sys

_TEXT = re.compile(r'<text[^>]*x="([\d.]+)" y="([\d.]+)" textLength="([\d.]+)"[^>]*>(.*?)</text>')


def svg_to_text(svg: str) -> str:
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, _length, body in _TEXT.findall(svg):
        rows.setdefault(float(y), []).append((float(x), html.unescape(body)))
    lines = []
    for y in sorted(rows):
        line = ""
        for x, text in sorted(rows[y]):
            col = round(x / 12.2)
            line = line.ljust(col) + text
        lines.append(line.replace("\xa0", " ").rstrip())
    return "\n".join(lines)


if __name__ == "__main__":
    print(svg_to_text(open(sys.argv[1], encoding="utf-8").read()))
