"""Reading the reports a search shows, for their excerpts: as the indexer reads them, never
outside the reports folder."""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path

from indexer.config import Settings
from indexer.files import SkipFile, inside, read_file
from indexer.sources.base import FileData

log = logging.getLogger(__name__)


class ReportFiles:
    """Reads reports as the indexer does: never outside the root, at most max_file_mb,
    UTF-8 with bad bytes replaced; a file that is gone or unreadable reads as None."""

    def __init__(self, settings: Settings, root: Path) -> None:
        self.root = root
        self.max_bytes = int(settings.index.max_file_mb * 1024 * 1024)
        self._root = str(root)
        self._root_real = os.path.realpath(root)
        self._folders: dict[str, bool] = {}  # command folder -> inside the root

    def path(self, key: str) -> str:
        return os.path.join(self._root, key)

    def _folder_inside(self, command: str) -> bool:
        """Whether a command's folder is inside the root: a folder there is; a symlink
        is if it leads inside."""
        path = os.path.join(self._root, command)
        try:
            st = os.lstat(path)
        except OSError:
            return False
        return stat.S_ISDIR(st.st_mode) or inside(self._root_real, path)

    def text(self, key: str) -> str | None:
        command = key.partition("/")[0]
        inside = self._folders.get(command)
        if inside is None:
            inside = self._folders[command] = self._folder_inside(command)
        try:
            if not inside:
                raise SkipFile("outside the root")
            # The folder is inside the root; O_NOFOLLOW keeps the file there too. A file
            # that is a symlink takes the slower road that checks where it leads.
            fd = os.open(self.path(key), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                return None
            return self._checked(key)
        except SkipFile:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            data = os.read(fd, min(self.max_bytes, st.st_size + 1))
            while len(data) < min(self.max_bytes, st.st_size) and (more := os.read(fd, 1 << 20)):
                data += more
        except OSError:
            return None
        finally:
            os.close(fd)
        data = data[: self.max_bytes]
        if b"\x00" in data[:8192]:  # a binary file: the indexer skips it too
            return None
        return FileData(key, data, st.st_mtime_ns, st.st_size).text()

    def _checked(self, key: str) -> str | None:
        try:
            return read_file(self.root, key, self.max_bytes).text()
        except (OSError, SkipFile) as exc:
            log.debug("%s: cannot read: %s", self.root / key, exc)
            return None
