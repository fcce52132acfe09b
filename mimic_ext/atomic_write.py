"""Writing a file so that it appears only complete, and never over one of its own inputs.

Every file mimic_ext writes (edited stages, imported robots, URDF exports, reports) goes
through here, so a full disk, a read-only or vanished folder, a kill or a power cut never
leaves a half-written asset or destroys the previous one: a temporary beside the target,
fsync'd, renamed over it, and the folder fsync'd. The temporary's name says who wrote it
(``.NAME.mimic-ext-tmp.HOST.PID.XXXXXXXX.EXT``), so one left by a killed writer is
recognised and removed by the next write of the same file, and nothing else is.

``check_output`` refuses, before any work, an output that would overwrite an input
(symlinks and hard links followed) or has the wrong type; ``locked_for_update`` holds an
advisory lock for a read-modify-write of one file, so two concurrent edits both land.

An output named by a symbolic link is refused, naming the link and the file it points
at: writing through it would change a file the user did not name, and replacing it would
destroy a link the user made; neither is this tool's call (``set``/``remove`` in place,
where the user named the link as the stage to edit, are the one case that writes
through: ``through_link=True``).
Kept free of pxr so that report writers in processes without USD can use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from .errors import MimicInputError
from .input_files import check_regular_file

TEMP_MARK = ".mimic-ext-tmp."
#: how long an edit waits for another process's edit of the same file before giving up
LOCK_TIMEOUT_S = 60.0
_TEMP_RE = re.compile(re.escape(TEMP_MARK) + r"(?P<host>[A-Za-z0-9-]+)\.(?P<pid>\d+)\.[A-Za-z0-9_]+(\.[^.]*)?$")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def remove_stale_temporaries(out_path: str | os.PathLike) -> list[Path]:
    """Delete the temporaries of ``out_path`` that a writer on this host left when it died.

    Only files of our own naming for this very target, and only those whose writer's pid
    is gone (a live writer's temporary, or another host's, is left alone).
    """
    out = Path(out_path)
    folder = out.parent if str(out.parent) else Path(".")
    removed = []
    host = _host()
    try:
        candidates = list(folder.glob(f".{glob_escape(out.name)}{TEMP_MARK}*"))
    except OSError:
        return removed
    for tmp in candidates:
        m = _TEMP_RE.search(tmp.name)
        if not m or m.group("host") != host or _pid_alive(int(m.group("pid"))):
            continue
        with contextlib.suppress(OSError):
            tmp.unlink()
            removed.append(tmp)
    return removed


def glob_escape(name: str) -> str:
    """``name`` with glob metacharacters taken literally."""
    return re.sub(r"([*?\[])", r"[\1]", name)


def _real_target(out: Path) -> Path:
    """The file a write through ``out`` would change (a symlink's final target, else ``out``)."""
    return Path(os.path.realpath(out)) if os.path.islink(out) else out


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it lies under it, else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def refuse_symlink(out: Path) -> None:
    """``MimicInputError`` naming both paths when the output ``out`` is a symbolic link."""
    if not os.path.islink(out):
        return
    target = _shown(_real_target(out))
    raise MimicInputError(
        f"{out}: is a symbolic link to {target}; refusing to write through it (that would "
        f"change {target}, which was not named as the output) or to replace the link: give "
        f"{target} itself to change that file, or remove the link {out} to write a new file there"
    )


def _refuse_non_regular(out: Path, shown: Path) -> None:
    try:
        st = os.stat(out)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise MimicInputError(f"{shown}: cannot write: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise MimicInputError(f"{shown}: is a folder; give a file name to write")
    if not stat.S_ISREG(st.st_mode):
        raise MimicInputError(
            f"{shown}: exists and is not a regular file (a device, FIFO or socket); give a file name to write"
        )


def _refuse_unwritable_folder(out: Path, shown: Path) -> None:
    """``MimicInputError`` when the folder ``out`` would go in cannot hold it: its nearest
    existing ancestor is not a folder (a file named like one) or is not writable."""
    folder = out.parent
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    if not os.path.isdir(folder):
        raise MimicInputError(f"{shown}: cannot write there: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise MimicInputError(f"{shown}: cannot write there: the folder {folder} is not writable")


def _fsync_path(path: Path, directory: bool = False) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    except OSError as exc:
        if not directory or exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def write_atomically(
    out_path: str | os.PathLike, write: Callable[[Path], None], make_parent: bool = False, through_link: bool = False
) -> Path:
    """Call ``write(tmp)`` to fill a temporary in the target folder, then rename it to ``out_path``.

    A symlink ``out_path`` is refused (``refuse_symlink``) unless ``through_link``: then
    its target is replaced and the link stays (an in-place edit of a stage opened through it).
    The new file keeps the old one's permissions (a new one gets ``0666 & ~umask``, not
    mkstemp's private 0600). The data and then the folder are fsync'd, so after a crash
    the file is the old or the new one. On any failure ``out_path`` is untouched and the
    temporary is removed; ``OSError`` becomes a one-line ``MimicInputError`` naming the file.
    """
    return write_all_atomically([(out_path, write)], make_parent, through_link)[0]


def write_all_atomically(
    items: Sequence[tuple[str | os.PathLike, Callable[[Path], None]]],
    make_parent: bool = False,
    through_link: bool = False,
) -> list[Path]:
    """``write_atomically`` for several files that succeed or fail together: every temporary
    is written first, and only when all are complete are they renamed into place, so a run
    whose third report cannot be written (a read-only folder, a full disk) leaves none."""
    staged: list[tuple[Path, Path, Path, Path]] = []  # (shown, out, tmp, folder)
    try:
        for out_path, write in items:
            staged.append(_write_temporary(Path(out_path), write, make_parent, through_link))
        for shown, out, tmp, folder in staged:
            try:
                os.replace(tmp, out)
                _fsync_path(folder, directory=True)
            except OSError as exc:
                raise MimicInputError(f"{shown}: cannot write: {exc.strerror or exc}") from None
    finally:
        for _, _, tmp, _ in staged:
            if tmp.exists():
                tmp.unlink()
    return [shown for shown, _, _, _ in staged]


def _write_temporary(
    shown: Path, write: Callable[[Path], None], make_parent: bool, through_link: bool
) -> tuple[Path, Path, Path, Path]:
    """The complete, fsync'd temporary for ``shown``: (shown, real target, temporary, folder)."""
    out = _real_target(shown)
    _refuse_non_regular(out, shown)
    if not through_link:
        refuse_symlink(shown)
    folder = out.parent if str(out.parent) else Path(".")
    if make_parent:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MimicInputError(f"{shown}: cannot create folder {folder}: {exc.strerror or exc}") from None
    if not folder.is_dir():
        raise MimicInputError(f"{shown}: folder {folder} does not exist")
    remove_stale_temporaries(out)
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{out.name}{TEMP_MARK}{_host()}.{os.getpid()}.", suffix=out.suffix or ".tmp", dir=folder
        )
    except OSError as exc:
        raise MimicInputError(f"{shown}: cannot write in {folder}: {exc.strerror or exc}") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        os.chmod(tmp, out.stat().st_mode & 0o777 if out.exists() else 0o666 & ~_umask())
        _fsync_path(tmp)
    except BaseException as exc:
        if tmp.exists():
            tmp.unlink()
        if isinstance(exc, OSError):
            raise MimicInputError(f"{shown}: cannot write: {exc.strerror or exc}") from None
        raise
    return shown, out, tmp, folder


def write_texts_atomically(items: Sequence[tuple[str | os.PathLike, str]], make_parent: bool = False) -> list[Path]:
    """``write_all_atomically`` for (path, UTF-8 text) pairs: all written or none."""

    def writer(text: str) -> Callable[[Path], None]:
        return lambda tmp: tmp.write_text(text, encoding="utf-8") and None

    return write_all_atomically([(path, writer(text)) for path, text in items], make_parent)


def write_text_atomically(out_path: str | os.PathLike, text: str, make_parent: bool = False) -> Path:
    """``write_atomically`` for UTF-8 text."""
    return write_atomically(out_path, lambda tmp: tmp.write_text(text, encoding="utf-8"), make_parent)


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when ``a`` and ``b`` name one file: equal after symlinks, or hard links to one inode."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_output(
    out_path: str | os.PathLike,
    inputs: Iterable[str | os.PathLike] = (),
    suffixes: Sequence[str] | None = None,
    what: str = "output",
    links: bool = True,
) -> Path:
    """Refuse, before any work, an output that would overwrite an input or is of the wrong type.

    ``inputs``: every file the command reads (a stage's layers, the robot file); an output
    that resolves to one of them (symlinks followed, hard links too) is refused, and so is
    any other output that is a symlink (``refuse_symlink``; ``links=False`` leaves that to a
    later call that knows every input, so that a link to one is named as an input).
    ``suffixes``: the allowed extensions (lower case, with the dot), e.g. ``(".urdf",)``.
    Returns ``out_path`` as a Path.
    """
    out = Path(out_path)
    if str(out_path) in ("", "-") and suffixes is not None:
        raise MimicInputError(f"'{out_path}': give a file name for the {what}")
    if suffixes is not None and out.suffix.lower() not in suffixes:
        raise MimicInputError(
            f"{out}: the {what} must be a {' or '.join(suffixes)} file (got '{out.suffix or 'no extension'}')"
        )
    _refuse_non_regular(_real_target(out), out)
    _refuse_unwritable_folder(_real_target(out), out)
    for inp in inputs:
        if same_file(out, inp):
            raise MimicInputError(
                f"{out}: is an input of this command ({inp}, same file); refusing to "
                "overwrite it: choose another output file"
            )
    if links:
        refuse_symlink(out)
    return out


@contextlib.contextmanager
def locked_for_update(path: str | os.PathLike, timeout: float = LOCK_TIMEOUT_S) -> Iterator[Path]:
    """Hold an exclusive advisory lock (``flock``) on the file ``path`` resolves to, for a
    read-modify-write: read it inside the block, write it with ``write_atomically``.

    The lock is on the file itself, so nothing is left beside it. An atomic write replaces
    the file (a new inode), so a waiter that then gets the lock on the old one sees that
    and locks the new one before it reads. Waits up to ``timeout`` seconds, then a one-line
    ``MimicInputError``. Without ``fcntl`` (Windows) it locks nothing.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover  (no advisory locks on this platform)
        yield Path(path)
        return
    real = Path(os.path.realpath(path))
    deadline = time.monotonic() + timeout
    while True:
        check_regular_file(path, "file to edit")
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            raise MimicInputError(f"{path}: cannot be opened: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() > deadline:
                raise MimicInputError(
                    f"{path}: another process has been editing this file for over "
                    f"{timeout:g} s (it holds the lock); try again when it is done"
                ) from None
            time.sleep(0.02)
            continue
        except OSError:  # a filesystem without flock: edit unlocked rather than refuse
            os.close(fd)
            yield real
            return
        try:
            held, now = os.fstat(fd), os.stat(real)
        except OSError:
            os.close(fd)
            continue
        if (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino):  # replaced while we waited
            os.close(fd)
            continue
        break
    try:
        yield real
    finally:
        os.close(fd)
