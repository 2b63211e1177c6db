"""Render the app icon (resources/icons/ddr-explorer.svg) to the sizes the platforms want.

Writes, next to the SVG: ``ddr-explorer-<N>.png`` for N in :data:`SIZES` (freedesktop
hicolor sizes), ``ddr-explorer.ico`` (Windows: 16-256 px in one file) and
``ddr-explorer.icns`` (macOS).  Qt's SVG renderer draws the PNGs; Pillow (installed with
reportlab) packs the .ico and .icns.  Run it again after editing the SVG::

    .venv/bin/python packaging/render_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SVG = ICONS / "ddr-explorer.svg"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def render(size: int, out: Path) -> None:
    """Draw the SVG into a transparent ``size`` x ``size`` PNG."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"{SVG}: not a valid SVG")
    img = QImage(size, size, QImage.Format_ARGB32)
    img.fill(Qt.transparent)
    p = QPainter(img)
    p.setRenderHint(QPainter.Antialiasing)
    renderer.render(p)
    p.end()
    if not img.save(str(out)):
        raise SystemExit(f"could not write {out}")


def main() -> int:
    from PySide6.QtGui import QGuiApplication
    from PIL import Image

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841  (Qt needs one)
    pngs = {}
    for n in SIZES:
        out = ICONS / f"ddr-explorer-{n}.png"
        render(n, out)
        pngs[n] = out
        print(f"wrote {out.relative_to(ICONS.parent.parent)}")
    big = Image.open(pngs[512]).convert("RGBA")
    big.save(ICONS / "ddr-explorer.ico", sizes=[(n, n) for n in SIZES if n <= 256])
    big.save(ICONS / "ddr-explorer.icns")
    print("wrote resources/icons/ddr-explorer.ico and ddr-explorer.icns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
