"""State and Control of the mimic solver: what changes per step, apart from the static Model.

``State``: generalized positions, velocities and continuous joints' whole turns per environment
(``Model.state()``); ``Control``: drive targets and efforts per DOF under Newton's names, with
the 0.1 names as deprecated aliases (``Model.control()``). Columns follow ``Model.layout``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import warp as wp


@dataclass
class State:
    """Generalized positions and velocities, one row per environment (SI units); whole turns of
    continuous joints (int32, one column per 1-DOF joint, 0 for the others)."""

    joint_q: wp.array
    joint_qd: wp.array
    joint_turns: wp.array | None = None


_NEW_NAMES = {"joint_target_pos": "joint_target_q", "joint_target_vel": "joint_target_qd", "joint_effort": "joint_f"}


def _deprecated(name: str) -> None:
    warnings.warn(
        f"Control.{name} is deprecated (removed after 0.2): use Control.{_NEW_NAMES[name]}, Newton's name",
        DeprecationWarning,
        stacklevel=3,
    )


def _alias(old: str):
    """getter and setter of a deprecated Control name, warning and forwarding to Newton's."""
    new = _NEW_NAMES[old]

    def get(self):
        _deprecated(old)
        return getattr(self, new)

    def put(self, value) -> None:
        _deprecated(old)
        setattr(self, new, value)

    return get, put


@dataclass
class Control:
    """Per environment and DOF: drive targets (rad or m, rad/s or m/s) and efforts (N m or N),
    under Newton's names (``newton.Control``); the 0.1 names are deprecated aliases."""

    joint_target_q: wp.array
    joint_target_qd: wp.array
    joint_f: wp.array

    def __init__(
        self,
        joint_target_q=None,
        joint_target_qd=None,
        joint_f=None,
        *,
        joint_target_pos=None,
        joint_target_vel=None,
        joint_effort=None,
    ):
        for new, old, name in (
            (joint_target_q, joint_target_pos, "joint_target_pos"),
            (joint_target_qd, joint_target_vel, "joint_target_vel"),
            (joint_f, joint_effort, "joint_effort"),
        ):
            if old is not None:
                _deprecated(name)
                if new is not None:
                    raise TypeError(f"Control: give {_NEW_NAMES[name]} or {name}, not both")
        self.joint_target_q = joint_target_q if joint_target_q is not None else joint_target_pos
        self.joint_target_qd = joint_target_qd if joint_target_qd is not None else joint_target_vel
        self.joint_f = joint_f if joint_f is not None else joint_effort

    joint_target_pos = property(*_alias("joint_target_pos"))
    joint_target_vel = property(*_alias("joint_target_vel"))
    joint_effort = property(*_alias("joint_effort"))


__all__ = ["Control", "State"]
