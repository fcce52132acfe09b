"""FET022 from the menu on the stage open in Kit: every follower of the sample passes and the reports are written.

Runs inside Kit (``[[test]]`` of the extension) with the extension enabled, on the default engine
(the stage's own PhysX, or warp where the app has no omni.physx). The sample stage is copied to a
temporary folder first, because the runner writes its reports next to the stage; the copy switches
the articulation's self-collision off (as the real Robotiq asset does), since the sample's box
colliders overlap and PhysX's default lets them collide.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import omni.kit.actions.core
import omni.kit.app
import omni.kit.test
import omni.usd
from pxr import Sdf, Usd

from mimic_ext.kit.extension import ACTION_NAME, get_extension
from mimic_ext.kit.stage_sweep import DONE, FAILED

__all__ = ["TestStageSweep"]

SAMPLE = Path(__file__).resolve().parents[3] / "data" / "robotiq_style_linkage.usda"
#: Wall-clock budget for the sweep; the first run in a process compiles Warp kernels (tens of seconds on 2 cores).
SWEEP_BUDGET_S = 600.0


class TestStageSweep(omni.kit.test.AsyncTestCase):
    async def setUp(self):
        self._tmp = Path(tempfile.mkdtemp(prefix="mimic_ext_kit_test_"))
        self._stage_path = self._tmp / SAMPLE.name
        shutil.copyfile(SAMPLE, self._stage_path)
        sample = Usd.Stage.Open(str(self._stage_path))
        root = sample.GetPrimAtPath("/Robotiq")
        root.AddAppliedSchema("PhysxArticulationAPI")
        root.CreateAttribute("physxArticulation:enabledSelfCollisions", Sdf.ValueTypeNames.Bool).Set(False)
        sample.GetRootLayer().Save()
        self._text = self._stage_path.read_text()
        ok, err = await omni.usd.get_context().open_stage_async(str(self._stage_path))
        self.assertTrue(ok, err)

    async def tearDown(self):
        await omni.usd.get_context().close_stage_async()
        shutil.rmtree(self._tmp, ignore_errors=True)

    async def test_menu_sweep_passes_and_writes_reports(self):
        ext = get_extension()
        self.assertIsNotNone(ext, "the mimic_ext extension is not enabled")
        # What the menu item runs: its registered action (onclick_action of the extension's own
        # MenuItemDescription; the merged-menu structure of omni.kit.menu.utils is internal).
        item = next(i for i in ext.menu_items[0].sub_menu if i.name == ACTION_NAME)
        omni.kit.actions.core.execute_action(*item.onclick_action)
        app = omni.kit.app.get_app()
        deadline = time.monotonic() + SWEEP_BUDGET_S
        while ext.runner.status not in (DONE, FAILED) and time.monotonic() < deadline:
            await app.next_update_async()
        self.assertEqual(ext.runner.status, DONE, ext.runner.message)
        result = ext.runner.result
        self.assertEqual(result.status, "pass")
        self.assertEqual(len(result.followers), 5)
        for follower in result.followers:
            self.assertEqual(follower.status, "pass", f"{follower.follower}: {follower.messages}")
            self.assertEqual(follower.engine, result.engine)
        self.assertTrue(result.engine.startswith(("kit-physx (omni.physx", "warp")), result.engine)
        self.assertEqual(self._stage_path.read_text(), self._text)  # the sweep left the stage as it was
        for kind in ("json", "junit", "html"):
            path = ext.runner.report_paths[kind]
            self.assertEqual(path.parent, self._tmp)
            self.assertTrue(path.is_file() and path.stat().st_size > 0, path)
