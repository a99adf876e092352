"""Where records go: a new recording file (JSON Lines). Views add outputs of their own.

A whole file made at once (an import, an export) is written under a temporary name beside
its target, 0600 (`temporary_beside`), and renamed to it only once complete (`publish`):
a full disk, an I/O error or a signal leaves the target as it was (`discard` removes the
temporary). `whole_file` does all three for a file written through one stream.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from k8s_wiretap.capture import jsonfast
from k8s_wiretap.capture.format import header_record
from k8s_wiretap.wire.words import counted

__all__ = [
    "FileOutput",
    "append_record",
    "create",
    "discard",
    "publish",
    "reason",
    "recording_problem",
    "temporary_beside",
    "whole_file",
]


def reason(error: BaseException) -> str:
    """Why an output failed, in a few words ("No space left on device")."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def recording_problem(path: Path, *, overwrite: bool, hint: str) -> str | None:
    """Why a new recording cannot be written at `path` (None if it can), to say before
    anything starts; `hint` tells how to replace an existing file."""
    if not path.parent.is_dir():
        return f"folder {path.parent} does not exist"
    if path.is_dir():
        return f"{path} is a folder"
    if not overwrite and os.path.lexists(path):
        return f"{path} exists ({hint})"
    return None


def create(path: Path, *, overwrite: bool) -> int:
    """A new file at `path`, 0600, open for writing (its descriptor).

    `O_EXCL | O_NOFOLLOW`: nothing that exists is written into, a symlink is never
    followed. With `overwrite`, what is at `path` (a file, or a symlink: the link, never
    what it points to) is removed first, so the output is always a file of its own, 0600,
    whatever the old one's mode was; something that appears at `path` in between is not
    replaced (FileExistsError)."""
    if overwrite:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)


def temporary_beside(path: Path) -> Path:
    """A name for `path`'s temporary, in its folder (a rename there is atomic), hidden,
    unlikely to be taken (`create` refuses one that is)."""
    return path.with_name(f".{path.name}.{secrets.token_hex(6)}.partial")


def discard(temporary: Path) -> None:
    """Remove a temporary that will not become its target (gone already: nothing to do)."""
    with contextlib.suppress(OSError):
        os.unlink(temporary)


def publish(temporary: Path, path: Path, *, overwrite: bool) -> None:
    """The complete `temporary` becomes `path`: synced to the disk first (a full disk
    may only say so then), renamed over what is at `path` only with `overwrite` (a
    symlink there is replaced, never followed); without it, something that appeared at
    `path` meanwhile is kept (FileExistsError). On any error the temporary is removed."""
    try:
        fd = os.open(temporary, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        if overwrite:
            os.replace(temporary, path)
            return
        try:
            os.link(temporary, path)  # refuses an existing `path`
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: check, then rename
            if os.path.lexists(path):
                raise FileExistsError(17, os.strerror(17), str(path)) from None
            os.replace(temporary, path)
            return
        os.unlink(temporary)
    except BaseException:
        discard(temporary)
        raise


@contextlib.contextmanager
def whole_file(path: Path, *, overwrite: bool) -> Iterator[BinaryIO]:
    """A binary stream that becomes the file `path` (0600) once the block ends without an
    error; on any error (a full disk, a signal's exception) nothing is left of it."""
    temporary = temporary_beside(path)
    out = os.fdopen(create(temporary, overwrite=False), "wb")
    try:
        with out:
            yield out
    except BaseException:
        discard(temporary)
        raise
    publish(temporary, path, overwrite=overwrite)


def append_record(path: Path, record: Mapping[str, Any]) -> None:
    """Add `record` as the last line of the recording at `path`, after ending a line
    that was cut part way (a write a signal or a full disk stopped)."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW)
    try:
        size = os.fstat(fd).st_size
        cut = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"
        data = (("\n" if cut else "") + line).encode("utf-8")
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
    finally:
        os.close(fd)


class FileOutput:
    """Appends records to a new recording file (0600: it holds cluster data).

    The file must not exist (`O_EXCL`: nothing that appeared since a check is replaced)
    unless `overwrite`, which removes an existing one (a symlink is removed, never
    followed) and makes a new file, 0600 (`create`). `header`: fields the header adds
    (a part's, `parts.py`). Open it only once the proxy is sure
    to run: opening is what creates or empties the file.

    Records wait in memory until `flush` (or until PENDING_LIMIT bytes wait), then go to
    the file in one `os.write` loop. A failed flush lets go of what it held (nothing is
    kept for later) and counts, in `lost`, the records it did not write whole; a line it
    wrote in part stays cut short until the next write, which ends it first (`resume`, or
    any `flush`), so the next record starts a line of its own and never merges with it.
    `rewind(position)` takes the file back to an earlier `position` (its size after a
    flush): what was written since goes (a batch that must be written whole or not at all,
    `importers.webhook`).
    """

    PENDING_LIMIT = 1024 * 1024
    # a record's line, `dumps`'s bytes and a newline (`jsonfast.Writer.line` where `dumps`
    # is a Writer: `importers.sink`)
    line: Callable[[Any], bytes] = staticmethod(jsonfast.exact_line)

    def __init__(
        self,
        path: Path,
        *,
        redacted: bool,
        max_body: int,
        overwrite: bool = False,
        header: dict[str, Any] | None = None,
    ) -> None:
        self.path = path
        self._fd = create(path, overwrite=overwrite)
        self._pending: list[bytes] = []
        # how a record is written: `jsonfast.exact`, or a writer as exact and faster
        # (`jsonfast.Writer`, for the records of values it read: `importers.sink`)
        self.dumps: Callable[[Any], bytes] = jsonfast.exact
        self._pending_size = 0
        self.lost = 0  # records the last failed flush did not write whole
        self.size = 0  # bytes in the file
        self._cut = False  # whether the file ends in a line a failed flush cut short
        try:
            self.write(header_record(redacted=redacted, max_body=max_body, **(header or {})))
            self.flush()
        except BaseException:
            os.close(self._fd)
            raise

    def write(self, record: Mapping[str, Any]) -> None:
        line = self.line(record)
        self._pending.append(line)
        self._pending_size += len(line)
        if self._pending_size >= self.PENDING_LIMIT:
            self.flush()

    def write_all(self, records: Iterable[Mapping[str, Any]]) -> None:
        """`write` each of `records`, in order."""
        line, pending = self.line, self._pending
        for record in records:
            written = line(record)
            pending.append(written)
            self._pending_size += len(written)
        if self._pending_size >= self.PENDING_LIMIT:
            self.flush()

    def write_lines(self, data: bytes) -> None:
        """Records already written as lines (each `dumps`'s bytes and a newline)."""
        if not data:
            return
        self._pending.append(data)
        self._pending_size += len(data)
        if self._pending_size >= self.PENDING_LIMIT:
            self.flush()

    def copy_lines(self, fd: int, offset: int, count: int) -> None:
        """Records already written as lines, `count` bytes of the file `fd` from `offset`:
        copied by the kernel where it can (`copy_file_range`), after what waits."""
        self.flush()
        end = offset + count
        while offset < end:
            try:
                n = os.copy_file_range(fd, self._fd, end - offset, offset)
            except OSError as error:
                if error.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                    raise
                n = 0
            if n <= 0:  # another file system, or none that copies: read and write
                data = os.pread(fd, min(end - offset, 1 << 20), offset)
                if not data:
                    raise OSError(errno.EIO, f"{count:,} bytes to copy, the file ends before")
                n = 0
                while n < len(data):
                    n += os.write(self._fd, data[n:])
            offset += n
            self.size += n

    def flush(self, *, all_or_none: bool = False) -> None:
        """Write what waits (after ending a line a failed flush cut short); on an error,
        let it go, count it in `lost`, raise. `all_or_none`: first ask the file system for room
        for all of it, and raise ENOSPC without writing a byte when there is none, so that
        a reader of the growing file never sees a part of it that would be taken back
        (`rewind` stays for a disk that fills between the question and the write)."""
        if not self._pending:
            return
        if self._cut:
            self._pending.insert(0, b"\n")
        data = b"".join(self._pending)
        records = len(self._pending) - self._cut
        self._pending, self._pending_size = [], 0
        written = 0
        try:
            if all_or_none and not _room(self._fd, len(data)):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            while written < len(data):
                written += os.write(self._fd, data[written:])
        except OSError:
            whole = data.rfind(b"\n", 0, written) + 1
            self.lost = records - data.count(b"\n", self._cut, whole)
            self._cut = whole < written if written else self._cut
            raise
        finally:
            self.size += written
        self._cut = False

    @property
    def position(self) -> tuple[int, bool]:
        """Where the file stands (its size, and whether it ends in a cut line), for
        `rewind`."""
        return self.size, self._cut

    def rewind(self, position: tuple[int, bool]) -> None:
        """Take the file back to an earlier `position`: what waits, and what was written
        since, goes. OSError when the file cannot be truncated."""
        self._pending, self._pending_size = [], 0
        size, cut = position
        if size != self.size:  # a file nothing was written to is left as it is
            os.ftruncate(self._fd, size)
            os.lseek(self._fd, size, os.SEEK_SET)
        self.size, self._cut = size, cut

    def resume(self, record: Mapping[str, Any]) -> None:
        """After a failed flush: end the line it may have cut, write `record` (a note of
        the gap) and flush; raises as `flush` does when the disk still has no room."""
        self._pending, self._pending_size = [], 0
        self.write(record)
        self.flush()
        self.lost = 0

    def close(self) -> None:
        """Flush, then close the file (closed even when the flush fails)."""
        if self._fd < 0:
            return
        try:
            self.flush()
        finally:
            os.close(self._fd)
            self._fd = -1

    def describe(self, error: BaseException) -> str:
        """What the recorder says when this file fails (see `capture.recorder.Output`)."""
        return f"recording stopped: {self.path}: {reason(error)}"

    def resumed(self, lost: int) -> str:
        """What the recorder says when this file is written again after it failed."""
        return f"recording resumed: {self.path} ({counted(lost, 'record')} lost)"


def _room(fd: int, size: int) -> bool:
    """Whether the file system of `fd` has room for `size` more bytes now: its free blocks
    (those a process of this user may take; root may take the reserved ones too). A file
    system that tells nothing (no blocks at all: some virtual ones) is taken to have room."""
    stats = os.fstatvfs(fd)
    if not stats.f_blocks:
        return True
    free = stats.f_bfree if os.geteuid() == 0 else stats.f_bavail
    return size <= free * stats.f_frsize
