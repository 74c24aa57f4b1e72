"""Which filesystem a folder is on, and whether inotify sees every change made there.

inotify reports only what goes through this machine's kernel: on a network or FUSE
filesystem a file written by another machine (or by the FUSE server itself) raises no
event, so such a folder has to be polled.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

MOUNTINFO = "/proc/self/mountinfo"

# Filesystems whose files other machines (or a server) change behind this kernel's back.
NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "9p",
        "ceph",
        "glusterfs",
        "lustre",
        "afs",
        "davfs",
        "ncpfs",
        "ncp",
        "coda",
        "gfs2",
        "ocfs2",
        "gpfs",
        "beegfs",
        "orangefs",
    }
)

# mountinfo writes a space, tab, newline and backslash in a path as \040, \011, \012, \134.
_ESCAPE = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class Mount:
    """One line of mountinfo: where a filesystem is mounted, its type and its source."""

    mount_point: str
    fstype: str
    source: str


def _unescape(field: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> list[Mount]:
    """The mounts listed in a mountinfo text, in its order (a later mount hides an earlier
    one at the same point); lines that do not parse are left out."""
    mounts = []
    # Only a newline ends a line: the kernel escapes it in a path, but not the other
    # characters str.splitlines() ends lines at (U+2028, U+0085, ...).
    for line in text.split("\n"):
        fields = line.split(" ")
        # id, parent, major:minor, root, mount point, options, optional fields..., "-",
        # fstype, source, super options
        try:
            dash = fields.index("-", 6)
        except ValueError:
            continue
        if dash + 2 >= len(fields):
            continue
        mounts.append(
            Mount(
                mount_point=_unescape(fields[4]),
                fstype=fields[dash + 1],
                source=_unescape(fields[dash + 2]),
            )
        )
    return mounts


def _contains(mount_point: str, path: str) -> bool:
    if mount_point == "/":
        return path.startswith("/")
    return path == mount_point or path.startswith(mount_point.rstrip("/") + "/")


def filesystem_of(path: Path, mountinfo: str | None = None) -> Mount | None:
    """The mount holding ``path`` (after symlinks): the one whose mount point is its longest
    prefix, component by component. ``mountinfo`` is the text of /proc/self/mountinfo,
    read when not given; None when it cannot be read (not Linux) or names no mount."""
    if mountinfo is None:
        try:
            with open(MOUNTINFO, "rb") as f:
                mountinfo = os.fsdecode(f.read())
        except OSError:
            return None
    real = os.path.realpath(path)
    best: Mount | None = None
    for mount in parse_mountinfo(mountinfo):
        if _contains(mount.mount_point, real) and (
            best is None or len(mount.mount_point) >= len(best.mount_point)
        ):
            best = mount
    return best


def is_fuse(fstype: str) -> bool:
    """FUSE filesystems: ``fuse``, ``fuseblk`` and ``fuse.<name>`` (sshfs, davfs2, ...)."""
    return fstype in ("fuse", "fuseblk") or fstype.startswith("fuse.")


def polling_reason(mount: Mount | None) -> str | None:
    """Why inotify would miss changes on this mount, in words; None for a local
    filesystem (or an unknown mount: inotify is the best guess there)."""
    if mount is None:
        return None
    where = f"{mount.fstype} mount at {mount.mount_point}"
    if is_fuse(mount.fstype):
        return f"{where}: inotify does not see changes made behind the FUSE server"
    if mount.fstype in NETWORK_FILESYSTEMS:
        return f"{where}: inotify does not see changes made by other machines"
    return None
