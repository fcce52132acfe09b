"""The sweep on real NVIDIA PhysX (headless, CPU by default) through ``ovphysx``.

PhysX reads the stage itself, so it gets a private flattened copy (``prepared``) with the
validator's rejects hidden, a PhysicsScene where the stage has none, the test drive written
on references without a drive, and floating roots welded (``fix_base``); each change is a
note on the result. All swept joints run in one PhysX scene: the robot is cloned once per
environment (``physx_session``). ``physx:cuda:0`` selects the GPU pipeline where there is one.

What PhysX reads (measured here, ovphysx 0.7): ``PhysxMimicJointAPI:rotX|rotY|rotZ`` as
``q_f + gearing * q_ref + offset = 0`` with the offset in the follower's USD unit (degrees
for a revolute follower) and the gearing per USD unit of each joint, degrees converted by
PhysX itself; any other instance name (``transX``) is ignored, so its follower is not
coupled. ``NewtonMimicAPI`` is read too, as ``q_f = coef0 + coef1 * q_ref`` with coef0 in
degrees for a revolute follower. A relation with ``naturalFrequency`` and ``dampingRatio``
> 0 is a spring-damper; articulation links self-collide unless
``physxArticulation:enabledSelfCollisions`` is false (PhysX's default; our solver has no
contacts), which a stage with overlapping colliders shows.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import MimicInputError
from ...schema import joints, read_relations
from ...schema.relation import PHYSX, PHYSX_INSTANCES, MimicRelation
from ..plan import SweepPlan
from . import prepared
from .base import ReadRelation, Trace
from .physx_session import import_ovphysx, run_physx, versions


def physx_reading(rel: MimicRelation) -> ReadRelation:
    """How PhysX understands one authored relation (canonical SI, with what it does differently)."""
    note = ""
    hard = True
    if rel.schema == PHYSX and rel.instance not in PHYSX_INSTANCES:
        note = f"dropped: PhysX reads PhysxMimicJointAPI instances rotX, rotY and rotZ only, not '{rel.instance}'"
    elif rel.compliant:
        hard = False
        note = (
            f"compliant: a spring-damper on the relation's error (naturalFrequency {rel.natural_frequency:g}, "
            f"dampingRatio {rel.damping_ratio:g})"
        )
    return ReadRelation(rel.follower, rel.leader or "", rel.multiplier, rel.offset, hard=hard, note=note)


def self_collision_notes(stage) -> list[str]:
    """Articulations whose links PhysX lets collide with each other (its default), when they have colliders."""
    from pxr import Usd, UsdPhysics

    notes = []
    for root in prepared.articulation_roots(stage):
        value = prepared.self_collisions(root)
        if value is False or not any(p.HasAPI(UsdPhysics.CollisionAPI) for p in Usd.PrimRange(root)):
            continue
        why = (
            "authored"
            if value
            else ("PhysX default: physxArticulation:enabledSelfCollisions unset, or set without PhysxArticulationAPI")
        )
        notes.append(
            f"links of {root.GetPath()} collide with each other on PhysX ({why}), as in the warp "
            f"engine's solver: colliders that overlap at the joints push the links apart"
        )
    return notes


class PhysxEngine:
    name = "physx"
    supported_kinds = (joints.REVOLUTE, joints.PRISMATIC)

    def __init__(self, device: str = "cpu", threads: int = 0, default_masses: bool = True):
        if device != "cpu" and not device.startswith("cuda"):
            raise MimicInputError(f"physx engine: unknown device '{device}' (use cpu or cuda[:N])")
        if not isinstance(threads, int) or threads < 0:
            raise MimicInputError(f"physx engine: threads must be a whole number >= 0, got {threads!r}")
        self.device = device
        self.threads = threads
        self.default_masses = bool(default_masses)
        import_ovphysx()  # a missing peer is one line naming the extra, before any work

    def versions(self) -> dict[str, str]:
        return {**versions(), "physx_device": self.device, "physx_threads": str(self.threads)}

    def prepare(self, stage, plan: SweepPlan, relations: Sequence[MimicRelation], fix_base: bool = True):
        """(the private copy PhysX reads, the robot root that is cloned per environment or None)."""
        prep = prepared.simulator_copy(
            stage, plan, relations, "PhysX would give each 1 kg", self.default_masses, fix_base
        )
        source = prepared.robot_root(prep.stage)
        return prep, source

    def simulate(
        self, stage, plan: SweepPlan, watch: Sequence[str], relations: Sequence[MimicRelation], fix_base: bool = True
    ) -> Trace:
        import time

        t0 = time.perf_counter()
        prep, source = self.prepare(stage, plan, relations, fix_base)
        trace = Trace(notes=list(prep.notes) + self_collision_notes(prep.stage))
        trace.relations = [physx_reading(r) for r in read_relations(prep.stage)]
        prep_s = time.perf_counter() - t0

        def targets(start: int, stop: int) -> dict:
            block = plan.target_block(start, stop)
            return {pj.path: block[:, :, j] for j, pj in enumerate(plan.joints)}

        run = run_physx(
            prep.stage,
            plan.total_steps,
            plan.dt,
            targets,
            record=list(dict.fromkeys([pj.path for pj in plan.joints] + list(watch))),
            num_envs=plan.num_envs,
            sample_steps=plan.sample_steps,
            device=self.device,
            clone_source=source,
            threads=self.threads,
            bodies=True,
        )
        trace.positions, trace.missing = run.positions, run.missing
        trace.body_positions = run.body_positions
        trace.body_samples = list(range(len(plan.sample_steps))) if run.body_positions else []
        trace.notes.extend(run.notes)
        trace.timings = {**run.timings, "build_s": prep_s + run.timings.get("build_s", 0.0)}
        return trace
