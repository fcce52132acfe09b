"""The one atomic writer every output goes through."""

import os

import pytest

from mimic_ext.atomic_write import write_atomically, write_text_atomically
from mimic_ext.errors import MimicInputError


def test_failure_midway_keeps_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "report.json"
    out.write_text("old")

    def broken(tmp):
        tmp.write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(MimicInputError, match="report.json: cannot write: No space left"):
        write_atomically(out, broken)
    assert out.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_replaces_keeping_permissions_and_makes_folders_on_request(tmp_path):
    out = tmp_path / "a.txt"
    out.write_text("x")
    out.chmod(0o640)
    write_text_atomically(out, "y")
    assert out.read_text() == "y" and out.stat().st_mode & 0o777 == 0o640
    deep = tmp_path / "new" / "dir" / "b.txt"
    with pytest.raises(MimicInputError, match="does not exist"):
        write_text_atomically(deep, "z")
    write_text_atomically(deep, "z", make_parent=True)
    mask = os.umask(0)
    os.umask(mask)
    assert deep.read_text() == "z" and deep.stat().st_mode & 0o777 == 0o666 & ~mask
