"""`lsrb view FOLDER`: a local page over the runs under a folder, live while they run.

- runs.py    the runs under the folder (a bounded walk; a run is named only from it)
- data.py    what a page shows, read as `lsrb report` reads it (one rule, one place)
- pages.py   the HTML (escaped) of the list, a run and a comparison
- server.py  the loopback-only HTTP server (Host checked, GET only, a strict CSP)
- assets/    view.js draws a run's page and keeps it up to date; view.css

The static, shareable page stays `lsrb report`.
"""

from __future__ import annotations

import argparse


def add_view_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder", nargs="?", default="lsrb-out", help="where runs are written (default: lsrb-out)"
    )
    parser.add_argument(
        "--port", type=int, default=8765, help="port on 127.0.0.1 (default: 8765; 0: a free one)"
    )
