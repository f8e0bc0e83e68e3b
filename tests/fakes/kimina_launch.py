"""Start the real Kimina Lean Server (PyPI `kimina-ast-server`, package `server`) on 127.0.0.1.

    python kimina_launch.py PORT

Its FastAPI app (`server.main:app`) runs unchanged under uvicorn, configured as its README says,
by `LEAN_SERVER_*` variables (`server/settings.py`). Two things are switched off at import, and
nothing else is touched:

- the database: `server/prisma_client.py` generates a Prisma client at import (Node and the
  network). The app only uses it when `LEAN_SERVER_DATABASE_URL` is set (`db.connected`); it is
  not set here, and the module is replaced by one whose `prisma` is never reached.
- cloud logging: Google Cloud Logging is used only when `LEAN_SERVER_ENVIRONMENT=prod`
  (`server/logger.py`); the launcher runs the server in `dev`.

On Python < 3.12, `kimina_client.models` (the server's models) imports `TypedDict` from `typing`
whenever `typing.NotRequired` exists (3.11), and pydantic refuses `typing.TypedDict` before 3.12
("Please use `typing_extensions.TypedDict`"). There the launcher hands it
`typing_extensions.TypedDict`, the one pydantic asks for, before the import.
"""

from __future__ import annotations

import os
import sys
import types
import typing


class _NoDatabase:
    def __getattr__(self, name: str) -> object:
        raise RuntimeError("the database is switched off in this test (LEAN_SERVER_DATABASE_URL unset)")


def main() -> None:
    port = int(sys.argv[1])
    if sys.version_info < (3, 12):
        import typing_extensions

        typing.TypedDict = typing_extensions.TypedDict
    os.environ.pop("LEAN_SERVER_DATABASE_URL", None)
    os.environ["LEAN_SERVER_ENVIRONMENT"] = "dev"
    stub = types.ModuleType("server.prisma_client")
    stub.prisma = _NoDatabase()  # type: ignore[attr-defined]
    sys.modules["server.prisma_client"] = stub

    import uvicorn
    from server.main import app

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
