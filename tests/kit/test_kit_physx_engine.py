"""The in-stage runner on the stage's own PhysX (``kit-physx``): omni.physx steps the open stage, an
omni.physics.tensors articulation view sets DOF targets and reads DOF positions.

The omni.physx / omni.physics.tensors stand-ins (tests/kit_stubs) run real NVIDIA PhysX through ovphysx,
so these verdicts are PhysX's and are compared with the CLI's ``physx`` engine (ovphysx on a flattened
copy). Without ovphysx the stand-in runs mimic_ext's Warp solver and says so in the engine label; the
tests that compare with PhysX skip then.
"""

from __future__ import annotations

import hashlib
import threading
import time

import pytest
from fet022_engines_common import DATA_STAGES, INSPIRE, ROBOTIQ, import_to, shared, verdicts
from pxr import Sdf, Usd

pytest.importorskip("mimic_ext.solver", reason="the Warp solver is not in this tree yet")

#: Same PhysX build, same composed stage, same steps and targets as the CLI's physx engine: the ratios came
#: out identical here; 1e-6 is the float32 resolution of PhysX's positions, far below any real engine
#: difference (a misread gearing or offset moves the ratio by more than 1 %).
SAME_PHYSX = 1e-6


pytestmark = pytest.mark.usefixtures("physx_stand_in")  # a fresh stage PhysX per test (conftest)


def _needs_ovphysx():
    pytest.importorskip("ovphysx", reason="the omni.physx stand-in runs real PhysX only with the physx extra")


@pytest.fixture
def report_dir(tmp_path):
    """Reports in the test's folder (the shared assets are read in place and must not get report files)."""
    import carb.settings

    from mimic_ext.kit.stage_sweep import SETTING_REPORT_DIR

    settings = carb.settings.get_settings()
    settings.set(SETTING_REPORT_DIR, str(tmp_path / "reports"))
    yield tmp_path / "reports"
    settings.set(SETTING_REPORT_DIR, "")


def _layers(stage) -> dict[str, str]:
    """The text of every layer the stage uses, its session layer included."""
    layers = list(stage.GetUsedLayers()) + [stage.GetSessionLayer()]
    return {layer.identifier: layer.ExportToString() for layer in layers}


def _physx_settings() -> dict:
    import carb.settings
    import omni.physx

    settings = carb.settings.get_settings()
    keys = ("/physics/updateToUsd", "/physics/updateVelocitiesToUsd", "/physics/fabricEnabled")
    return {**{k: settings.get(k) for k in keys}, "gpu": omni.physx.get_physx_interface().get_overwrite_gpu_setting()}


def _sweep(kit, runner, **start):
    task = runner.start(**start)
    assert task is not None
    kit.run_until(task.done, max_frames=400_000)  # frames are ~1 ms here; a Robotiq sweep takes a few dozen
    kit.frames(2)
    return runner.result


def _digest(folder):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def _agree_with_cli_physx(result, path):
    from mimic_ext.fet022 import run

    cli = run(str(path), engine="physx")
    assert verdicts(result) == verdicts(cli), ([f.messages for f in result.followers], result.warnings)
    for ours, theirs in zip(result.followers, cli.followers):
        assert ours.motion_ratio == pytest.approx(theirs.motion_ratio, rel=SAME_PHYSX), ours.name
        assert ours.direction == theirs.direction
    return cli


def _check_labelled(kit, runner, result):
    """The engine that produced the result is named on the result, each follower, the window and the report."""
    import json

    from mimic_ext.kit.stage_sweep import StageSweepRunner

    assert {f.engine for f in result.followers} == {result.engine}
    window = kit.ui.Workspace.get_window(StageSweepRunner.WINDOW_TITLE)
    assert kit.find("fet022.engine", window.frame).text == f"Engine: {result.engine}"
    report = json.loads(runner.report_paths["json"].read_text())
    assert result.engine in json.dumps(report)


def test_the_robotiq_usd_is_swept_on_the_stages_physx_as_the_cli_physx_engine_sweeps_it(
    kit, extension, report_dir, physx_stand_in
):
    _needs_ovphysx()
    from mimic_ext.kit.stage_sweep import DONE

    folder = shared(ROBOTIQ).parents[1]
    files = _digest(folder)
    stage = kit.open(ROBOTIQ)
    before, settings = _layers(stage), _physx_settings()
    runner = extension.runner
    result = _sweep(kit, runner)  # the default engine: the stage's own PhysX
    assert runner.status == DONE, runner.message
    assert result.status == "pass" and len(result.followers) == 5
    assert result.engine.startswith("kit-physx (omni.physx ") and "ovphysx" in result.engine, result.engine
    _agree_with_cli_physx(result, ROBOTIQ)
    _check_labelled(kit, runner, result)
    # the open stage is as it was, layer by layer (the temporary session sublayer is gone), and so are the files
    assert _layers(stage) == before
    assert _digest(folder) == files
    outputs = physx_stand_in._stub_outputs()
    assert outputs["usd"] == 0 and outputs["fabric"] == 0  # PhysX wrote nothing to USD or Fabric
    assert outputs["attach"] == outputs["detach"] == 1 and not physx_stand_in.get_physx_interface().is_running()
    assert outputs["simulate"] == 720  # the plan's steps, one run (one swept joint)
    assert outputs["threads"] == {threading.main_thread().ident}  # PhysX only ever touched on Kit's thread
    assert _physx_settings() == settings
    assert runner.frames_while_running > 0
    notes = " | ".join(result.warnings)
    assert "temporary anonymous sublayer of its session layer" in notes and "welded" in notes


@pytest.mark.parametrize("name", DATA_STAGES)
def test_every_data_stage_gets_the_cli_physx_engines_verdicts_on_the_stages_physx(
    kit, extension, data_copy, report_dir, physx_stand_in, name
):
    """Including the linkage sample, whose overlapping colliders collide on PhysX (the CLI's physx engine
    fails it too; on warp it passes: test_kit_stage_sweep.py)."""
    _needs_ovphysx()
    path = data_copy(name)
    stage = kit.open(path)
    before = _layers(stage)
    result = _sweep(kit, extension.runner)
    assert result.followers, name
    _agree_with_cli_physx(result, path)
    assert _layers(stage) == before
    assert physx_stand_in._stub_outputs()["usd"] == 0


@pytest.mark.slow
def test_the_inspire_hand_runs_its_five_environments_one_after_another(
    kit, extension, tmp_path, report_dir, physx_stand_in
):
    """Five swept joints: the one robot of the open stage is run five times from its own state."""
    _needs_ovphysx()
    path = import_to(tmp_path, INSPIRE, "physx", self_collisions=False)
    stage = kit.open(path)
    before = _layers(stage)
    result = _sweep(kit, extension.runner)
    assert result.num_envs == 5 and result.status == "pass" and len(result.followers) == 6
    _agree_with_cli_physx(result, path)
    assert physx_stand_in._stub_outputs()["attach"] == physx_stand_in._stub_outputs()["detach"] == 5
    assert _layers(stage) == before


def test_choosing_warp_in_the_window_sweeps_with_mimic_ext_solver_and_leaves_physx_alone(
    kit, extension, robotiq_sample, physx_stand_in
):
    from mimic_ext.kit.stage_sweep import ENGINE_CHOICES, StageSweepRunner

    kit.open(robotiq_sample)
    runner = extension.runner
    _sweep(kit, runner, report_dir=robotiq_sample.parent)  # a first sweep opens the window
    window = kit.ui.Workspace.get_window(StageSweepRunner.WINDOW_TITLE)
    combo = kit.find("fet022.engine_choice", window.frame)
    combo.model.get_item_value_model().set_value(ENGINE_CHOICES.index("warp"))  # the user picks "warp"
    physx_stand_in._stub_reset()
    kit.click(kit.find("fet022.run", window.frame))  # Run again
    kit.run_until(lambda: not runner.is_running(), max_frames=400_000)
    kit.frames(2)
    result = runner.result
    assert result.engine == "warp" and result.status == "pass"  # the linkage passes on our solver
    _check_labelled(kit, runner, result)
    assert physx_stand_in._stub_outputs()["attach"] == 0  # the stage's PhysX was not used


def test_without_ovphysx_the_stand_in_runs_warp_and_the_label_says_so(
    kit, extension, data_copy, report_dir, physx_stand_in
):
    """The omni.physx stand-in's other physics: the code path is the same, the label says what ran."""
    from mimic_ext.fet022 import run

    physx_stand_in._stub_use_backend("warp")
    path = data_copy("gripper_prismatic.usda")
    stage = kit.open(path)
    before = _layers(stage)
    result = _sweep(kit, extension.runner)
    assert result.engine.startswith("kit-physx (omni.physx ") and "Warp solver, not PhysX" in result.engine
    ours = run(str(path), engine="warp")
    assert verdicts(result) == verdicts(ours) == {"<stage>": "pass", "finger2_joint": "pass"}
    # our solver holds the relation exactly in both; 1e-9 is round-off of the same computation
    assert result.followers[0].motion_ratio == pytest.approx(ours.followers[0].motion_ratio, rel=1e-9)
    assert _layers(stage) == before and physx_stand_in._stub_outputs()["attach"] == 1


def _slow_physx(monkeypatch, physx_stand_in, seconds=0.002):
    """Each PhysX step takes ``seconds`` longer, so a sweep spans many frames (a cancel lands mid-sweep)."""
    sim = type(physx_stand_in.get_physx_simulation_interface())
    original = sim.simulate

    def simulate(self, elapsed_time, current_time):
        time.sleep(seconds)
        return original(self, elapsed_time, current_time)

    monkeypatch.setattr(sim, "simulate", simulate)


def test_cancel_stops_a_physx_sweep_and_puts_the_stage_back(
    kit, extension, data_copy, tmp_path, monkeypatch, physx_stand_in
):
    from mimic_ext.kit.stage_sweep import CANCELLED, StageSweepRunner

    _slow_physx(monkeypatch, physx_stand_in)
    stage = kit.open(data_copy("geared_pair.usda"))
    before, settings = _layers(stage), _physx_settings()
    runner = extension.runner
    task = runner.start(report_dir=tmp_path / "reports")
    kit.run_until(lambda: physx_stand_in._stub_outputs()["simulate"] > 20, max_frames=400_000)
    assert len(stage.GetSessionLayer().subLayerPaths) == 1  # mid-sweep: the temporary sublayer is there
    window = kit.ui.Workspace.get_window(StageSweepRunner.WINDOW_TITLE)
    kit.click(kit.find("fet022.cancel", window.frame))
    kit.run_until(task.done, max_frames=400_000)
    steps = physx_stand_in._stub_outputs()["simulate"]
    kit.frames(20)
    assert physx_stand_in._stub_outputs()["simulate"] == steps < 720  # it stopped, well before the end
    assert runner.status == CANCELLED and runner.result is None and not (tmp_path / "reports").exists()
    assert not [t for t in threading.enumerate() if t.name == "mimic_ext FET022 sweep"]
    assert _layers(stage) == before and _physx_settings() == settings
    outputs = physx_stand_in._stub_outputs()
    assert outputs["attach"] == outputs["detach"] == 1 and not physx_stand_in.get_physx_interface().is_running()


def test_shutdown_stops_a_physx_sweep_and_puts_the_stage_back(kit, data_copy, tmp_path, monkeypatch, physx_stand_in):
    from mimic_ext.fet022.engines import engine_names
    from mimic_ext.kit import MimicExtension

    _slow_physx(monkeypatch, physx_stand_in)
    ext = MimicExtension()
    ext.on_startup("mimic_ext-0.1.0")
    assert "kit-physx" in engine_names()
    stage = kit.open(data_copy("geared_pair.usda"))
    before, settings = _layers(stage), _physx_settings()
    ext.runner.start(report_dir=tmp_path)
    kit.run_until(lambda: physx_stand_in._stub_outputs()["simulate"] > 20, max_frames=400_000)
    ext.on_shutdown()
    steps = physx_stand_in._stub_outputs()["simulate"]
    kit.frames(20)
    assert physx_stand_in._stub_outputs()["simulate"] == steps < 720
    assert not [t for t in threading.enumerate() if t.name == "mimic_ext FET022 sweep"]
    assert _layers(stage) == before and _physx_settings() == settings
    assert not physx_stand_in.get_physx_interface().is_running()
    assert "kit-physx" not in engine_names()  # unregistered with the extension


def test_a_playing_timeline_is_refused_in_one_line_and_nothing_is_touched(
    kit, extension, data_copy, report_dir, physx_stand_in
):
    stage = kit.open(data_copy("geared_pair.usda"))
    before = _layers(stage)
    physx_stand_in._stub_play()
    result = _sweep(kit, extension.runner)
    assert result.status == "error"
    assert "PhysX is already simulating" in result.reason and "stop it and run the sweep again" in result.reason
    assert "\n" not in result.reason
    assert physx_stand_in._stub_outputs()["attach"] == 0 and _layers(stage) == before


def test_a_gpu_scene_is_swept_on_the_cpu_pipeline_and_its_setting_is_put_back(
    kit, extension, data_copy, report_dir, physx_stand_in
):
    """The numpy tensor frontend refuses GPU pipelines (omni.physics.tensors api.py): the sweep forces CPU."""
    path = data_copy("geared_pair.usda")
    edit = Usd.Stage.Open(str(path))
    scene = edit.GetPrimAtPath("/physicsScene")
    scene.CreateAttribute("physxScene:enableGPUDynamics", Sdf.ValueTypeNames.Bool).Set(True)
    edit.GetRootLayer().Save()
    kit.open(path)
    result = _sweep(kit, extension.runner)
    assert result.status == "pass"
    assert physx_stand_in.get_physx_interface().get_overwrite_gpu_setting() == -1  # the scene's own setting again


def test_the_engine_runs_from_a_script_on_kits_thread_and_refuses_another_thread(
    kit, extension, data_copy, physx_stand_in
):
    from mimic_ext.fet022 import run

    stage = kit.open(data_copy("geared_pair.usda"))
    before = _layers(stage)
    result = run(stage, engine="kit-physx")  # registered by the extension; on Kit's thread it runs at once
    assert result.status == "pass" and result.engine == "kit-physx"
    assert _layers(stage) == before
    elsewhere = {}
    worker = threading.Thread(target=lambda: elsewhere.update(result=run(stage, engine="kit-physx")))
    worker.start()
    worker.join(60)
    refused = elsewhere["result"]
    assert refused.status == "error" and "steps the open stage on Kit's thread" in refused.reason
    assert physx_stand_in._stub_outputs()["attach"] == 1 and _layers(stage) == before
