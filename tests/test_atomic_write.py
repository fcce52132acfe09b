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

    with pytest.raises(MimicInputError, match=r"report\.json: cannot write: No space left"):
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


def test_data_then_folder_are_fsynced_around_the_rename(tmp_path, monkeypatch):
    import mimic_ext.atomic_write as aw

    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(aw.os, "fsync", fsync)
    monkeypatch.setattr(aw.os, "replace", replace)
    out = tmp_path / "a.usda"
    write_text_atomically(out, "new")
    assert [e[0] for e in events] == ["fsync", "replace", "fsync"]
    assert ".a.usda.mimic-ext-tmp." in events[0][1]  # the data, under its temporary name
    assert events[2][1] == str(tmp_path)  # then the folder that holds the new name


def test_a_symlink_output_is_refused_naming_both_paths_unless_written_through(tmp_path, monkeypatch):
    """Issue 27: writing through a link changes a file the user did not name; replacing it
    destroys their link. Refused (both named) unless the caller writes through on purpose
    (an in-place edit of a stage opened through the link)."""
    from mimic_ext.atomic_write import check_output

    monkeypatch.chdir(tmp_path)
    target = tmp_path / "real.usda"
    target.write_text("old")
    link = tmp_path / "link.usda"
    link.symlink_to("real.usda")
    for refuse in (lambda: write_text_atomically(link, "new"), lambda: check_output(link, ["other.usda"])):
        with pytest.raises(MimicInputError, match=r"link\.usda: is a symbolic link to real\.usda; refusing"):
            refuse()
    assert link.is_symlink() and os.readlink(link) == "real.usda" and target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.usda", "real.usda"]
    write_atomically(link, lambda tmp: tmp.write_text("new"), through_link=True)
    assert link.is_symlink() and os.readlink(link) == "real.usda"
    assert target.read_text() == "new"


@pytest.mark.parametrize("kind", ["device", "folder"])
def test_never_replaces_a_device_or_folder(tmp_path, kind):
    out = tmp_path / "out.json"
    if kind == "device":
        out.symlink_to("/dev/null")
        expect = "not a regular file"
    else:
        out.mkdir()
        expect = "is a folder"
    with pytest.raises(MimicInputError, match=expect):
        write_text_atomically(out, "x")
    assert out.is_symlink() if kind == "device" else out.is_dir()


def test_check_output_refuses_an_input_by_any_name(tmp_path, monkeypatch):
    from mimic_ext.atomic_write import check_output

    stage = tmp_path / "g.usda"
    stage.write_text("x")
    (tmp_path / "link.urdf").symlink_to("g.usda")
    os.link(stage, tmp_path / "hard.urdf")
    monkeypatch.chdir(tmp_path)
    for out in ("link.urdf", "hard.urdf", str(tmp_path / "link.urdf")):
        with pytest.raises(MimicInputError, match="is an input of this command"):
            check_output(out, ["g.usda"], (".urdf",))
    with pytest.raises(MimicInputError, match=r"must be a \.urdf file"):
        check_output("g.usda", ["other.usda"], (".urdf",))
    assert check_output("new.urdf", ["g.usda"], (".urdf",)).name == "new.urdf"


def test_lock_waits_then_gives_one_line(tmp_path):
    from mimic_ext.atomic_write import locked_for_update

    f = tmp_path / "g.usda"
    f.write_text("x")
    with locked_for_update(f):
        with pytest.raises(MimicInputError, match="another process has been editing this file"):
            with locked_for_update(f, timeout=0.2):
                pass
    with locked_for_update(f, timeout=0.2) as real:  # released: free again
        assert real == f.resolve()


def test_lock_follows_the_file_an_atomic_write_put_in_place(tmp_path):
    """A waiter that gets the lock on the replaced (old) inode must lock the new file instead."""
    import threading

    from mimic_ext.atomic_write import locked_for_update

    f = tmp_path / "g.usda"
    f.write_text("v1")
    seen = []
    with locked_for_update(f):

        def waiter():
            with locked_for_update(f, timeout=10):
                seen.append(f.read_text())

        t = threading.Thread(target=waiter)
        t.start()
        write_text_atomically(f, "v2")  # the writer replaces the file, then releases the lock
    t.join(timeout=10)
    assert seen == ["v2"]


def test_only_our_dead_writers_temporaries_are_removed(tmp_path):
    import subprocess
    import sys

    from mimic_ext.atomic_write import TEMP_MARK, _host, remove_stale_temporaries

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    out = tmp_path / "g.usda"
    names = {
        "dead": f".g.usda{TEMP_MARK}{_host()}.{dead_pid}.abc123_x.usda",
        "alive": f".g.usda{TEMP_MARK}{_host()}.{os.getpid()}.abc123_x.usda",
        "other_host": f".g.usda{TEMP_MARK}otherhost.{dead_pid}.abc123_x.usda",
        "other_target": f".h.usda{TEMP_MARK}{_host()}.{dead_pid}.abc123_x.usda",
        "not_ours": ".g.usda.swp",
    }
    for n in names.values():
        (tmp_path / n).write_text("t")
    removed = remove_stale_temporaries(out)
    assert [p.name for p in removed] == [names["dead"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(v for k, v in names.items() if k != "dead")


def test_files_written_together_are_all_or_none(tmp_path):
    """Issue 43: a run whose last report fails at its write leaves none of them (the earlier
    ones' temporaries are complete, not yet renamed); on success all land."""
    from mimic_ext.atomic_write import write_all_atomically, write_texts_atomically

    old = tmp_path / "a.json"
    old.write_text("old")

    def fails(tmp):
        raise OSError(28, "No space left on device")

    with pytest.raises(MimicInputError, match=r"b\.html: cannot write: No space left on device"):
        write_all_atomically([(old, lambda tmp: tmp.write_text("new")), (tmp_path / "b.html", fails)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"] and old.read_text() == "old"
    written = write_texts_atomically([(old, "new"), (tmp_path / "sub" / "b.html", "page")], make_parent=True)
    assert written == [old, tmp_path / "sub" / "b.html"]
    assert old.read_text() == "new" and (tmp_path / "sub" / "b.html").read_text() == "page"
