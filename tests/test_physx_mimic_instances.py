"""Which PhysxMimicJointAPI instance names real PhysX (ovphysx) couples, for a prismatic and a
revolute follower: the question NVIDIA's rules and NVIDIA's answer disagree on (issue 44).

tier-core 2026.8's DJ.004 / DJ.006 say "PhysX does not enforce linear mimic" and ask a prismatic
follower for drive stiffness, and its DJ.007 accepts ``transX/Y/Z`` and ``X/Y/Z``; NVIDIA's
answer in isaac-sim/IsaacSim issue 731 says PhysX couples a prismatic follower under
``rotX/rotY/rotZ`` only. Measured here on ovphysx (CPU): a leader driven through a sine, its
follower related by ``q_f = q_l`` under each instance name. docs/conventions.md quotes the figures
(``MEASURED``), and the validator's MIMIC_INSTANCE_NAME message states them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pxr import Sdf
from shared_files import load_samples

pytest.importorskip("ovphysx", reason="real PhysX needs the physx extra: pip install 'mimic-ext[physx]'")

from mimic_ext.fet022.engines.physx_session import run_physx

ROOT = Path(__file__).resolve().parents[1]
STEPS, DT = 480, 1 / 240  # two seconds, one sine period
AMPLITUDE = {"prismatic": 0.03, "revolute": 0.5}  # m, rad: well inside the +-0.04 m / +-40 deg limits
#: (follower kind, instance) -> coupled on ovphysx 0.7.0 (docs/conventions.md)
MEASURED = {
    ("prismatic", "rotX"): True,
    ("prismatic", "transX"): False,
    ("prismatic", "X"): False,
    ("revolute", "rotX"): True,
    ("revolute", "transX"): False,
    ("revolute", "X"): False,
}


def _rig(kind: str, instance: str):
    """Leader and follower side by side on a fixed base, both along/about Y; only the leader is
    driven; ``PhysxMimicJointAPI:<instance>`` with gearing -1 (``q_f - q_l = 0``)."""
    S = load_samples()
    stage = S.new_stage(f"{kind} follower under PhysxMimicJointAPI:{instance}")
    r = S.Robot(stage, "/Rig")
    base = r.body("base", (0, 0, 0.05), (0.1, 0.2, 0.04), 0.5)
    a = r.body("lead", (0, 0.03, 0.1), (0.02, 0.01, 0.06), 0.05, center=(0, 0, 0.035))
    b = r.body("foll", (0, -0.03, 0.1), (0.02, 0.01, 0.06), 0.05, center=(0, 0, 0.035))
    r.fixed_base(base)
    if kind == "prismatic":
        lead = r.prismatic("leader", base, a, (-0.04, 0.04), axis="Y", drive=S.FINGER_DRIVE)
        foll = r.prismatic("follower", base, b, (-0.04, 0.04), axis="Y")
    else:
        lead = r.revolute("leader", base, a, (-40, 40), axis="Y", drive=S.GEAR_DRIVE)
        foll = r.revolute("follower", base, b, (-40, 40), axis="Y")
    prim = stage.GetPrimAtPath(foll)
    S.hand_physx(prim, instance, [lead], -1.0)
    prim.CreateAttribute(f"physxMimicJoint:{instance}:referenceJointAxis", Sdf.ValueTypeNames.Token).Set("rotX")
    return stage, lead, foll


def measure(kind: str, instance: str) -> tuple[float, float]:
    """(follower travel / leader travel, max |q_f - q_l|) over the run, SI."""
    stage, lead, foll = _rig(kind, instance)
    target = AMPLITUDE[kind] * np.sin(np.linspace(0.0, 2 * np.pi, STEPS))
    out = run_physx(stage, STEPS, DT, {lead: target}, record=[lead, foll])
    q_l, q_f = out.positions[lead][0], out.positions[foll][0]
    assert np.ptp(q_l) > AMPLITUDE[kind]  # the drive moved the leader through most of its sine
    return float(np.ptp(q_f) / np.ptp(q_l)), float(np.abs(q_f - q_l).max())


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "instance"), sorted(MEASURED))
def test_physx_couples_a_follower_under_rot_instances_only(kind, instance):
    """Coupled: travel ratio 1 within 1e-3 and |q_f - q_l| below 1e-4 (float32 positions; measured
    1.1e-7 m prismatic, 9.9e-6 rad revolute). Not coupled: the follower does not move (measured
    travel 0; bound 1e-6 of the leader's)."""
    ratio, error = measure(kind, instance)
    print(f"{kind} {instance}: ratio {ratio:.6g}, max |q_f - q_l| {error:.3g}")
    if MEASURED[(kind, instance)]:
        assert ratio == pytest.approx(1.0, abs=1e-3) and error < 1e-4
    else:
        assert ratio < 1e-6
