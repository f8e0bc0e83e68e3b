"""Headless Chromium (Debian's `chromium` package) for the pages' browser tests: the report's
and `lsrb view`'s. A test that needs it skips with a reason where it is not installed."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

NO_CHROMIUM = "headless Chromium is not installed (Debian: apt-get install -y chromium)"
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
CONSOLE = re.compile(r":CONSOLE[(:]")


def chromium(
    url: str, profile: Path, *args: str, size: tuple[int, int] = (1280, 2000)
) -> tuple[str, list[str]]:
    """Run headless Chromium on `url`; return stdout and the page's console messages."""
    assert CHROMIUM is not None
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
        "--mute-audio",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        f"--window-size={size[0]},{size[1]}",
        *args,
        url,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, [line for line in proc.stderr.splitlines() if CONSOLE.search(line)]


def body_attrs(dom: str) -> dict[str, str]:
    tag = re.search(r"<body([^>]*)>", dom)
    assert tag is not None, dom[:500]
    return dict(re.findall(r'([\w-]+)="([^"]*)"', tag.group(1)))


def png_distinct_row_share(path: Path) -> tuple[int, int, float]:
    """(width, height, share of distinct scanlines): near 0 for a blank page, high for charts."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, [], 0, 0, 4
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8
            channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
        elif kind == b"IDAT":
            idat.append(body)
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels + 1
    rows = {raw[i * stride : (i + 1) * stride] for i in range(height)}
    return width, height, len(rows) / height
