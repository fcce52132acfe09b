"""The omni.physx and omni.physics.tensors stand-ins behave as the real modules' sources say
(tests/kit_stubs/omni/physx/bindings/_physx.py and omni/physics/tensors/api.py cite them), so the
kit-physx tests mean something: e.g. PhysX does write to USD when updateToUsd is on."""

from __future__ import annotations

import numpy as np
import pytest
from fet022_engines_common import ROBOTIQ, shared
from pxr import Usd, UsdUtils

ROOT = "/Robotiq_2F_85/Robotiq_2F_85"  # the Robotiq USD's articulation root


pytestmark = pytest.mark.usefixtures("physx_stand_in")  # a fresh stage PhysX per test (conftest)


def _attach(stage) -> int:
    import omni.physx

    stage_id = UsdUtils.StageCache.Get().Insert(stage).ToLongInt()
    assert omni.physx.get_physx_simulation_interface().attach_stage(stage_id)
    return stage_id


@pytest.mark.parametrize("backend", ["ovphysx", "warp"])
def test_with_update_to_usd_on_fetch_results_writes_joint_states_into_the_stage(physx_stand_in, tmp_path, backend):
    """The Robotiq's joints carry PhysicsJointStateAPI: with Kit's default setting PhysX writes them."""
    if backend == "ovphysx":
        pytest.importorskip("ovphysx", reason="real PhysX needs the physx extra")
    import carb.settings
    import omni.physx

    physx_stand_in._stub_use_backend(backend)
    assert carb.settings.get_settings().get_as_bool("/physics/updateToUsd")  # Kit's default: on
    stage = Usd.Stage.Open(str(shared(ROBOTIQ)))
    stage.SetEditTarget(Usd.EditTarget(stage.GetSessionLayer()))  # where the writes go here: the edit target
    session_before = stage.GetSessionLayer().ExportToString()
    _attach(stage)
    sim = omni.physx.get_physx_simulation_interface()
    sim.simulate(1 / 60, 0.0)
    sim.fetch_results()
    assert physx_stand_in._stub_outputs()["usd"] == 1
    assert "state:angular:physics:position" in stage.GetSessionLayer().ExportToString() != session_before
    sim.detach_stage()


def test_a_view_dies_with_the_physx_objects_and_then_refuses_every_call(physx_stand_in):
    import omni.physics.tensors as tensors
    import omni.physx

    stage = Usd.Stage.Open(str(shared(ROBOTIQ)))
    stage_id = _attach(stage)
    sim_view = tensors.create_simulation_view("numpy", stage_id)
    art = sim_view.create_articulation_view("/Robotiq_2F_85/*")  # a glob per path component
    assert art.count == 1 and art.prim_paths == [ROOT]
    assert f"{ROOT}/Joints/finger_joint" in art.dof_paths[0]  # DOF paths are the joints' prim paths
    q = art.get_dof_positions()
    assert q.shape == (1, art.max_dofs) and q.dtype == np.float32
    assert art.get_dof_positions() is q  # the same array, filled again (api.py)
    with pytest.raises(Exception, match="Failed to set DOF position targets"):
        art.set_dof_position_targets(np.zeros((1, art.max_dofs - 1), np.float32), np.arange(1))  # no sparse rows
    omni.physx.get_physx_simulation_interface().detach_stage()
    assert not sim_view.is_valid and not art.check()
    with pytest.raises(Exception, match="Failed to get DOF positions from backend"):
        art.get_dof_positions()
    with pytest.raises(Exception, match="Failed to create simulation view"):
        tensors.create_simulation_view("numpy", stage_id)  # nothing attached


def test_a_pattern_that_matches_no_articulation_gives_an_empty_view_and_an_error_line(physx_stand_in, caplog):
    import logging

    import omni.physics.tensors as tensors

    stage = Usd.Stage.Open(str(shared(ROBOTIQ)))
    stage_id = _attach(stage)
    with caplog.at_level(logging.ERROR, logger="carb"):
        art = tensors.create_simulation_view("numpy", stage_id).create_articulation_view("/Nothing/here")
    assert art.count == 0
    assert any("did not match any rigid bodies" in r.getMessage() for r in caplog.records)  # sic, as the C++ says


def test_the_numpy_frontend_refuses_a_gpu_pipeline_and_is_running_says_who_steps(physx_stand_in, tmp_path):
    import omni.physics.tensors as tensors
    import omni.physx

    physx = omni.physx.get_physx_interface()
    assert not physx.is_running()
    physx_stand_in._stub_play()
    assert physx.is_running()  # play was pressed
    physx_stand_in._stub_stop()
    stage = Usd.Stage.Open(str(shared(ROBOTIQ)))
    physx.overwrite_gpu_setting(1)  # force GPU
    stage_id = _attach(stage)
    assert physx.is_running()  # IPhysxSimulation attached
    with pytest.raises(Exception, match="The Numpy frontend cannot be used with GPU pipelines"):
        tensors.create_simulation_view("numpy", stage_id)
    omni.physx.get_physx_simulation_interface().detach_stage()
    assert not physx.is_running()


def test_the_extension_manager_names_the_physics_that_runs(physx_stand_in):
    import omni.kit.app

    manager = omni.kit.app.get_app().get_extension_manager()
    ext_id = manager.get_enabled_extension_id("omni.physx")
    physx_stand_in._stub_use_backend("warp")
    assert "Warp solver, not PhysX" in manager.get_extension_dict(ext_id)["package"]["title"]
    physx_stand_in._stub_use_backend(None)
    title = manager.get_extension_dict(ext_id)["package"]["title"]
    try:
        import ovphysx  # noqa: F401
    except ImportError:
        assert "ovphysx is not installed" in title
    else:
        assert "over ovphysx" in title and "real NVIDIA PhysX" in title


def test_the_extension_dict_is_a_carb_dictionary_item_and_the_label_names_physx_title(physx_stand_in):
    """Kit's get_extension_dict returns a carb.dictionary.Item whose get(path, default) needs both arguments
    (Kit manual, carb.dictionary.Item.get): a one-argument get raises TypeError. The kit-physx label must still
    carry the enabled omni.physx's version and title."""
    import omni.kit.app

    from mimic_ext.kit.physx_stage_engine import physx_label

    manager = omni.kit.app.get_app().get_extension_manager()
    ext_id = manager.get_enabled_extension_id("omni.physx")
    item = manager.get_extension_dict(ext_id)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        item.get("package")
    title = item.get("package", None).get("title", "")
    assert title and isinstance(item.get_dict()["package"], dict)
    assert physx_label() == f"kit-physx (omni.physx {ext_id.partition('-')[2]}: {title})"
