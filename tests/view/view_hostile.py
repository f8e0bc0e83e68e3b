"""What a hostile model writes in the view's tests (conftest's runs, the tests' checks)."""

from __future__ import annotations

# What a hostile model writes: markup and script in every spelling that matters.
HOSTILE = (
    "<script>document.body.setAttribute('data-pwned','1')</script>"
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\"> & \"quotes\" 'too'"
)
