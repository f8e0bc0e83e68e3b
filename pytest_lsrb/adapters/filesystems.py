"""Is a directory on a network filesystem? SQLite's WAL mode is not safe there.

WAL keeps its index in shared memory (a `-shm` file mapped by every process), which only works
when all of them run on one machine; on NFS, Lustre, CIFS/SMB and FUSE mounts, processes on two
nodes sharing a cache could corrupt it (https://www.sqlite.org/wal.html, "all processes using a
database must be on the same host computer"). There the cache uses SQLite's rollback journal
(`journal_mode=DELETE`), which relies only on file locks.

The filesystem type comes from /proc/mounts (Linux): the mount point that is the longest prefix
of the directory's real path. Elsewhere the answer is "not known to be networked".
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

NETWORK_FS_TYPES: Final = frozenset(
    {
        "nfs",
        "nfs4",
        "lustre",
        "cifs",
        "smb3",
        "smbfs",
        "9p",
        "afs",
        "gpfs",
        "beegfs",
        "ceph",
        "glusterfs",
        "pvfs2",
    }
)
MOUNTS: Final = Path("/proc/mounts")


def _unescape(field: str) -> str:
    """/proc/mounts writes space, tab, newline and backslash in paths as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def filesystem_type(directory: Path, mounts_text: str | None = None) -> str | None:
    """The type of the filesystem holding `directory` (e.g. `ext4`, `nfs4`), None if unknown."""
    if mounts_text is None:
        try:
            mounts_text = MOUNTS.read_text("utf-8", errors="replace")
        except OSError:
            return None
    target = directory.resolve()
    best: tuple[int, str] | None = None
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        mount_point = Path(_unescape(parts[1]))
        if target == mount_point or mount_point in target.parents:
            depth = len(mount_point.parts)
            if best is None or depth >= best[0]:
                best = (depth, parts[2])
    return None if best is None else best[1]


def is_network_filesystem(fs_type: str | None) -> bool:
    if fs_type is None:
        return False
    return fs_type in NETWORK_FS_TYPES or fs_type.startswith("fuse")
