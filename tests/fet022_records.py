"""Hand-made FET022 follower records for tests of what reads them (reports, run folders, causes).

Each such test built the same ``FollowerResult`` (a PhysX rotX pair in degrees, offset 0) field by
field; the fields a test cares about are its keyword arguments here, the rest these defaults.
"""

from __future__ import annotations

from mimic_ext.fet022.result import FollowerResult


def follower_record(name: str, *, joints: str, leader: str, **fields) -> FollowerResult:
    """Follower ``joints/name`` swept by its reference ``joints/leader``; ``fields`` set or
    override any other ``FollowerResult`` field."""
    record = dict(
        follower=f"{joints}/{name}",
        name=name,
        reference=f"{joints}/{leader}",
        swept=f"{joints}/{leader}",
        schema="physx",
        label="PhysxMimicJointAPI:rotX",
        compliant=False,
        follower_unit="deg",
        reference_unit="deg",
        gearing=-1.0,
        offset=0.0,
    )
    record.update(fields)
    return FollowerResult(**record)
