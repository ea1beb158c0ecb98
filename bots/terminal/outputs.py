"""Files the terminal writes (digests, exports): named from channels, written whole or not at all.

A channel name can be anything a user typed or a platform sent: 300 characters, all Japanese,
slashes, or two names that differ only in characters a file name cannot hold. So a file's stem
keeps what of the name reads well, is bounded in bytes, and, whenever the name had to be changed
to fit, ends with a short hash of the whole channel key: 開発 and 営業 never write one file.

A file is written beside its final name and renamed over it only when complete, so a full disk or
a kill never leaves half a file under that name. A path that is a stream rather than a file
(``/dev/stdout``, a FIFO) is written straight through, and never replaced. Every failure is an
:class:`OutputError` naming the path and what to change.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from awai_engine.errors import AwaiError
from awai_engine.key_names import slug_with_digest
from bots.terminal.transcript import TERMINAL_PREFIX

MAX_STEM_BYTES = 120
"""Well under the 255 bytes most file systems allow a name, with room for a suffix."""

_UNFIT = re.compile(r"[^\w.-]+")
_DESCRIPTOR = re.compile(r"/proc/(?:self|\d+)/fd/\d+")
_MAX_LINK_HOPS = 40  # as the kernel's own limit on links followed


class OutputError(AwaiError, OSError):
    """A file the command was asked to write could not be written; nothing is left half-done."""


def file_stem(channel: str) -> str:
    """A file name stem for ``channel`` (a channel key): readable, bounded and unique per key,
    also where file names ignore case (macOS, Windows): a name with capitals gets the hash too,
    so ``Team`` and ``team`` never write one file."""
    name = channel.removeprefix(TERMINAL_PREFIX)
    fitted = _UNFIT.sub("-", name).strip("-.")
    bounded = fitted.encode("utf-8")[:MAX_STEM_BYTES].decode("utf-8", "ignore")
    if bounded and bounded == name and name == name.casefold():
        return bounded
    return slug_with_digest(bounded or "channel", channel, 8)


@contextlib.contextmanager
def written_whole(path: Path, mode: str = "wb") -> Iterator[IO[Any]]:
    """Open ``path`` for writing so that it holds the whole output or is left as it was.

    A descriptor the command already holds (``/dev/stdout`` redirected to a file) is appended
    to, so what was printed before stays; a link is followed, so the partial file sits beside
    the file it will replace (never in ``/dev/``) and the link stays a link."""
    if _is_stream(path) or _names_a_descriptor(path):
        with _opened(path, path, mode if _is_stream(path) else mode.replace("w", "a")) as handle:
            yield handle
        return
    if path.is_dir():
        raise OutputError(
            f"Cannot write {path}: a folder has that name: move it, or give another path."
        )
    target = path.resolve()
    partial = target.with_name(f".{target.name}.partial")
    try:
        with _opened(partial, path, mode) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        _replace(partial, target, path)
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` as the whole of ``path`` (see :func:`written_whole`)."""
    with written_whole(path) as handle:
        handle.write(data)


def _names_a_descriptor(path: Path) -> bool:
    """Whether ``path`` is, through its links, an open descriptor (``/dev/stdout``,
    ``/dev/fd/1``, ``/proc/self/fd/1``) rather than a file's own name."""
    hop = Path(os.path.abspath(path))
    for _ in range(_MAX_LINK_HOPS):
        if _DESCRIPTOR.fullmatch(str(Path(os.path.realpath(hop.parent)) / hop.name)):
            return True
        if not hop.is_symlink():
            return False
        hop = Path(os.path.abspath(hop.parent / os.readlink(hop)))
    return False


def _is_stream(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


@contextlib.contextmanager
def _opened(opened: Path, named: Path, mode: str) -> Iterator[IO[Any]]:
    text = "b" not in mode
    try:
        with opened.open(
            mode, encoding="utf-8" if text else None, newline="\n" if text else None
        ) as handle:
            yield handle
    except OutputError:
        raise
    except OSError as error:
        raise _said(named, error) from None


def _replace(partial: Path, target: Path, named: Path) -> None:
    try:
        partial.replace(target)
    except OSError as error:
        raise _said(named, error) from None


def _said(path: Path, error: OSError) -> OutputError:
    """The error in words that name ``path`` and what to change."""
    why = error.strerror or str(error)
    hints = {
        errno.ENOSPC: "free some space and run the command again",
        errno.EDQUOT: "free some space and run the command again",
        errno.ENOTDIR: f"{_file_in_the_way(path)} is a file, not a folder",
        errno.ENOENT: f"the folder {path.parent} does not exist",
        errno.EISDIR: "a folder has that name: move it, or give another path",
        errno.EACCES: "choose a folder you may write to",
        errno.EROFS: "the disk is read-only; choose a folder on another",
        errno.ENAMETOOLONG: "give a shorter name",
    }
    hint = hints.get(error.errno or 0)
    return OutputError(f"Cannot write {path}: {why}" + (f" ({hint})." if hint else "."))


def _file_in_the_way(path: Path) -> Path:
    """The nearest part of ``path`` that exists: the file a folder was expected at."""
    for parent in path.parents:
        if parent.exists():
            return parent
    return path
