"""Render the demo corpus's DDR sheet to the PNG pages the README shows.

Fits the demo corpus with the default sampler settings (or reopens the fit from the cache), writes
the sheet in date-invariant mode, and renders pages with poppler's ``pdftoppm``::

    python docs/make_sheet_pages.py [--pages 1,5] [--dpi 120] [--cache DIR]

or renders the pages of a sheet ``ddr report`` wrote (``--pdf``).  The README's pages are the full
sheet, with the analyses the 2-core default leaves out (about 2,300 CPU s from an empty cache)::

    ddr report resources/demo/terminal-bench-2.csv -o full.pdf --analyses difficulty,heldout,loo --date-invariant
    python docs/make_sheet_pages.py --pdf full.pdf --pages 1,4,5
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.ddr_sheet import write_ddr_sheet
from ddr_explorer.core.files import demo_corpus_path

DOCS = Path(__file__).resolve().parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", default="1,5", help="pages to render (comma-separated)")
    ap.add_argument("--dpi", type=int, default=120)
    ap.add_argument("--cache", type=Path, help="fit cache folder (default: the user's)")
    ap.add_argument("--pdf", type=Path, help="render this sheet (written by `ddr report`) instead of writing one")
    args = ap.parse_args(argv)
    if shutil.which("pdftoppm") is None:
        print("make_sheet_pages: pdftoppm (poppler-utils) is needed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        if args.pdf is not None:
            pdf = args.pdf
        else:
            pdf = Path(tmp) / "demo.pdf"
            res = write_ddr_sheet(demo_corpus_path(), pdf, cache_dir=args.cache, date_invariant=True,
                                  progress=lambda phase, i, n, eta: None)
            print(f"sheet from {'the cache' if res.from_cache else 'a new fit'}; {res.fit_path}")
        for page in (int(p) for p in args.pages.split(",")):
            stem = Path(tmp) / f"p{page}"
            subprocess.run(["pdftoppm", "-png", "-r", str(args.dpi), "-f", str(page), "-l", str(page),
                            "-singlefile", str(pdf), str(stem)], check=True)
            out = DOCS / f"ddr-sheet-page{page}.png"
            shutil.copyfile(stem.with_suffix(".png"), out)
            print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
