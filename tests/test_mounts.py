"""Which filesystem a folder is on, from mountinfo texts shaped like the kernel's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexer import mounts
from indexer.mounts import Mount, filesystem_of, polling_reason

LINES = (
    "22 1 0:21 / / rw,relatime shared:1 - overlay overlay rw,lowerdir=/l,upperdir=/u",
    "23 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw",
    "30 22 254:1 / /home rw,relatime shared:5 - ext4 /dev/vda2 rw",
    "41 22 0:40 / /mnt/nfs rw,relatime shared:20 - nfs4 fs.example:/export rw,vers=4.2",
    "42 41 0:41 / /mnt/nfs/inner rw,relatime - tmpfs tmpfs rw,size=1024k",
    "43 22 0:42 / /mnt/smb rw,relatime - cifs //nas/share rw,vers=3.1.1",
    "44 22 0:43 / /mnt/ssh rw,nosuid,nodev,relatime - fuse.sshfs me@host:/srv rw,user_id=0",
    "45 22 0:44 / /mnt/wsl rw,relatime - 9p drvfs rw,trans=virtio",
    r"46 22 0:45 / /mnt/my\040share rw,relatime - cifs //nas/my\040share rw",
    "47 22 0:46 / /mnt/a rw,relatime - xfs /dev/vdb rw",
    "48 22 0:47 / /mnt/ab rw,relatime - nfs nas:/ab rw",
    "49 22 0:48 / /media/usb rw,relatime - fuseblk /dev/sdb1 rw,user_id=0",
)
MOUNTINFO = "\n".join(LINES)


def fs(path: str) -> Mount | None:
    return filesystem_of(Path(path), MOUNTINFO)


@pytest.mark.parametrize(
    ("path", "fstype", "mount_point"),
    [
        ("/mnt/nfs/reports/x.md", "nfs4", "/mnt/nfs"),
        ("/mnt/nfs", "nfs4", "/mnt/nfs"),
        ("/mnt/smb/reports", "cifs", "/mnt/smb"),
        ("/mnt/ssh/reports", "fuse.sshfs", "/mnt/ssh"),
        ("/mnt/wsl/c/Users", "9p", "/mnt/wsl"),
        ("/mnt/my share/reports", "cifs", "/mnt/my share"),
        ("/home/me/reports", "ext4", "/home"),
        ("/srv/reports", "overlay", "/"),
        ("/media/usb/reports", "fuseblk", "/media/usb"),
    ],
)
def test_the_mount_of_a_path_is_read_from_mountinfo(
    path: str, fstype: str, mount_point: str
) -> None:
    mount = fs(path)
    assert mount is not None
    assert (mount.fstype, mount.mount_point) == (fstype, mount_point)


def test_the_longest_mount_point_wins_among_nested_mounts() -> None:
    assert fs("/mnt/nfs/inner/reports") == Mount("/mnt/nfs/inner", "tmpfs", "tmpfs")
    assert fs("/mnt/nfs/innerx") == Mount("/mnt/nfs", "nfs4", "fs.example:/export")


def test_a_mount_point_is_a_prefix_only_by_whole_path_components() -> None:
    assert fs("/mnt/ab/reports") == Mount("/mnt/ab", "nfs", "nas:/ab")
    assert fs("/mnt/a/reports") == Mount("/mnt/a", "xfs", "/dev/vdb")
    assert fs("/mnt/abc") == Mount("/", "overlay", "overlay")


def test_escapes_in_the_mount_point_and_source_are_decoded() -> None:
    text = r"50 22 0:49 / /mnt/tab\011new\012back\134slash rw - nfs srv:/a\040b rw"
    mount = filesystem_of(Path("/mnt/tab\tnew\nback\\slash/x"), text)
    assert mount == Mount("/mnt/tab\tnew\nback\\slash", "nfs", "srv:/a b")


def test_a_later_mount_on_the_same_point_hides_the_earlier_one() -> None:
    text = MOUNTINFO + "\n60 41 0:50 / /mnt/nfs rw - ext4 /dev/vdc rw"
    mount = filesystem_of(Path("/mnt/nfs/x"), text)
    assert mount is not None and mount.fstype == "ext4"


def test_malformed_lines_are_skipped() -> None:
    text = "garbage\n1 2 3\n" + MOUNTINFO + "\n70 22 0:1 / /broken rw -"
    assert filesystem_of(Path("/mnt/ssh/x"), text) == fs("/mnt/ssh/x")
    assert filesystem_of(Path("/broken/x"), text) == Mount("/", "overlay", "overlay")


def test_symlinks_are_resolved_before_the_mount_is_looked_up(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("/mnt/nfs/reports")
    mount = filesystem_of(tmp_path / "link", MOUNTINFO)
    assert mount is not None and mount.fstype == "nfs4"


@pytest.mark.parametrize(
    "fstype",
    ["nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs", "lustre", "afs"]
    + ["davfs", "fuse.davfs2", "ncpfs", "fuse", "fuse.sshfs", "fuseblk", "fuse.rclone"],
)
def test_network_and_fuse_filesystems_need_polling(fstype: str) -> None:
    reason = polling_reason(Mount("/mnt/x", fstype, "server:/x"))
    assert reason is not None
    assert reason.startswith(f"{fstype} mount at /mnt/x: inotify does not see changes")


def test_the_reason_says_why_in_words() -> None:
    assert polling_reason(Mount("/mnt/x", "nfs4", "s:/x")) == (
        "nfs4 mount at /mnt/x: inotify does not see changes made by other machines"
    )


@pytest.mark.parametrize(
    "fstype", ["ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs", "vfat"]
)
def test_local_filesystems_need_no_polling(fstype: str) -> None:
    assert polling_reason(Mount("/", fstype, "/dev/vda")) is None


def test_an_unknown_mount_needs_no_polling() -> None:
    assert polling_reason(None) is None


def test_this_machines_tmp_path_is_local(tmp_path: Path) -> None:
    if not Path(mounts.MOUNTINFO).exists():
        pytest.skip("no /proc/self/mountinfo (not Linux)")
    mount = filesystem_of(tmp_path)
    assert mount is not None
    assert polling_reason(mount) is None


def test_unreadable_mountinfo_gives_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mounts, "MOUNTINFO", str(tmp_path / "no-such-file"))
    assert filesystem_of(tmp_path) is None


def test_a_line_needs_a_type_and_a_source_after_the_dash() -> None:
    text = "70 22 0:1 / /short rw - ext4\n71 22 0:2 / /bare rw - nfs nas:/bare\n" + MOUNTINFO
    parsed = mounts.parse_mountinfo(text)
    assert parsed[0] == Mount("/bare", "nfs", "nas:/bare")  # no super options: still read
    assert len(parsed) == 1 + len(LINES)  # the short line is left out, and nothing after it


def test_a_mount_point_ending_in_any_letter_holds_its_files() -> None:
    text = MOUNTINFO + "\n80 22 0:9 / /mnt/boX rw - nfs nas:/box rw"
    mount = filesystem_of(Path("/mnt/boX/reports"), text)
    assert mount is not None and mount.fstype == "nfs"


def test_mountinfo_bytes_that_are_not_utf8_still_name_their_mount(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "mountinfo"
    info.write_bytes(MOUNTINFO.encode() + b"\n90 22 0:9 / /mnt/caf\xe9 rw - cifs //nas/c rw\n")
    monkeypatch.setattr(mounts, "MOUNTINFO", str(info))
    mount = filesystem_of(Path(os.fsdecode(b"/mnt/caf\xe9/reports")))
    assert mount is not None and mount.fstype == "cifs"


@pytest.mark.parametrize(
    "point",
    [
        "/mnt/no\xa0break",  # white space to str.split(), written as is by the kernel
        "/mnt/line\u2028separator",  # line ends to str.splitlines(), written as is too
        "/mnt/next\x85line",
        "/mnt/trailing\\040",  # a space at the end, escaped
    ],
)
def test_a_mount_point_is_read_whole_whatever_unescaped_characters_it_holds(point: str) -> None:
    text = MOUNTINFO + f"\n81 22 0:9 / {point} rw - nfs nas:/x rw\n" + LINES[3]
    path = point.replace("\\040", " ")
    assert mounts.parse_mountinfo(text)[-2] == Mount(path, "nfs", "nas:/x")
    mount = filesystem_of(Path(path + "/reports"), text)
    assert mount is not None and mount.mount_point == path
