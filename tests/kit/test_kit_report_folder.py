"""Reports of a stage not in a local, writable folder go to one local folder, never a mangled relative path."""

from __future__ import annotations

from pathlib import Path


def test_a_local_writable_stage_gets_its_reports_beside_it(tmp_path):
    from mimic_ext.kit.report_folder import report_location

    stage = tmp_path / "robot.usda"
    assert report_location(str(stage), str(stage)) == (tmp_path, "robot")


def test_nucleus_and_https_stages_go_to_the_fallback_folder(tmp_path):
    from mimic_ext.kit.report_folder import report_location

    for url in ("omniverse://server/Projects/Robots/gripper.usd", "https://example.com/assets/gripper%20v2.usd?x=1"):
        folder, stem = report_location(url, url, fallback=tmp_path / "reports")
        assert folder == tmp_path / "reports" and folder.is_absolute()
        assert stem in ("gripper", "gripper_v2")
        assert "omniverse:" not in str(folder) and "https:" not in str(folder)


def test_a_read_only_folder_goes_to_the_fallback_folder(tmp_path):
    from mimic_ext.kit.report_folder import report_location

    stage = tmp_path / "ro" / "robot.usda"
    # root can write anywhere, so "read-only" is what the writability check says
    folder, stem = report_location(
        str(stage), str(stage), fallback=tmp_path / "out", writable=lambda folder: folder != stage.parent
    )
    assert (folder, stem) == (tmp_path / "out", "robot")


def test_a_chosen_folder_wins_and_an_unsaved_stage_is_called_stage(tmp_path):
    from mimic_ext.kit.report_folder import report_location

    assert report_location("omniverse://s/a.usd", "", chosen=tmp_path) == (tmp_path, "a")
    folder, stem = report_location("anon:0x7f:tmp.usda", "", fallback=tmp_path)
    assert (folder, stem) == (tmp_path, "stage")


def test_the_default_fallback_is_documents_or_temp(tmp_path, monkeypatch):
    import tempfile

    from mimic_ext.kit.report_folder import default_fallback_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    assert default_fallback_dir(home=tmp_path) == tmp_path / "tmp" / "mimic_ext_fet022"
    (tmp_path / "Documents").mkdir()
    assert default_fallback_dir(home=tmp_path) == tmp_path / "Documents" / "mimic_ext" / "fet022"


def test_a_file_url_is_a_local_file(tmp_path):
    from mimic_ext.kit.report_folder import report_location

    url = Path(tmp_path / "r.usda").as_uri()
    assert report_location(url, "") == (tmp_path, "r")
