"""MJCF actuators as USD joint drives: PD servos (position, velocity, affine general) with their
default classes, gear and force range; ``dampratio`` through the joint-space inertia at the
file's configuration, as MuJoCo computes it.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import MimicInputError
from .joint_inertia import joint_space_inertia
from .mjcf_file import Attrs, MjcfFile, mjcf_bool
from .model import Joint
from .xmltree import Element

ACTUATOR_TAGS = (
    "general",
    "motor",
    "position",
    "velocity",
    "intvelocity",
    "damper",
    "cylinder",
    "muscle",
    "adhesion",
    "plugin",
)


class MjcfActuators(MjcfFile):
    """``<actuator>`` on the joints the bodies read (``joint_info``)."""

    def _actuators(self) -> None:
        skipped = []
        for section in self.root.findall("actuator"):
            for el in section.children:
                if el.tag not in ACTUATOR_TAGS:
                    raise MimicInputError(f"{el.where}: unknown actuator <{el.tag}>")
                a = self._merged_actuator(el)
                label = f"{el.tag} '{a.get('name')}'" if a.get("name") else f"{el.tag} (line {el.line})"
                joint_name = a.get("joint")
                info = self.joint_info.get(joint_name) if joint_name else None
                if joint_name and info is None:
                    raise MimicInputError(
                        f"{el.where}: actuator {label} names joint '{joint_name}', which does not exist"
                    )
                gains = self._drive_gains(el.tag, a) if info and info["type"] in ("hinge", "slide") else None
                if gains is None:
                    skipped.append(label)
                    continue
                kp, kv, dampratio = gains
                for gain_name, value in (("kp", kp), ("kv", kv), ("dampratio", dampratio)):
                    if value < 0:
                        raise MimicInputError(
                            f"{el.where}: actuator {label} has {gain_name} = {value:g} < 0: a USD "
                            "drive has no negative gains (use kp, kv, dampratio >= 0)"
                        )
                gear = a.numbers("gear", (1, 2, 3, 4, 5, 6), default=(1,))[0]
                if gear == 0:
                    raise MimicInputError(f"{el.where}: actuator {label} has gear 0, which drives nothing")
                assert info is not None  # gains come only from an actuator on a joint
                joint: Joint = info["joint"]
                if dampratio:
                    kv = dampratio * 2.0 * math.sqrt(kp * self._reflected_mass(joint, el, label) / gear**2)
                if joint.stiffness:
                    self.model.warnings.append(
                        f"{el.where}: joint '{joint.name}' has a passive spring and a servo; "
                        "one USD drive holds the servo, the spring is dropped"
                    )
                joint.stiffness = kp * gear**2
                joint.damping += kv * gear**2
                joint.target = 0.0
                frc = a.numbers("forcerange", 2)
                limited = mjcf_bool(a.get("forcelimited"), el, "forcelimited", None)
                if frc is not None and (limited or (limited is None and self.autolimits)):
                    effort = float(max(abs(frc[0]), abs(frc[1]))) * abs(gear)
                    joint.effort_limit = min(effort, joint.effort_limit or math.inf)
        if skipped:
            self.model.warnings.append(
                f"{self.source}: actuators not imported as joint drives (only position, "
                f"velocity and affine general actuators on a joint are): {', '.join(skipped)}"
            )

    def _merged_actuator(self, el: Element) -> Attrs:
        cls = el.get("class") or "main"
        if cls not in self.defaults:
            raise MimicInputError(f"{el.where}: <{el.tag}> names default class '{cls}', which does not exist")
        values: dict[str, str] = {}
        for tag in ("general", el.tag):
            values.update(self.defaults[cls].get(tag, {}))
        values.update(el.attrib)
        return Attrs(el, values)

    def _drive_gains(self, tag: str, a: Attrs):
        """(kp, kv, dampratio) when the actuator is a PD servo, else None."""
        if tag == "position":
            return a.number("kp", 1.0), a.number("kv", 0.0), a.number("dampratio", 0.0)
        if tag == "velocity":
            return 0.0, a.number("kv", 1.0), 0.0
        if tag == "general":
            if a.get("gaintype", "fixed") != "fixed" or a.get("biastype", "none") != "affine":
                return None
            if a.get("dyntype", "none") != "none":
                return None
            gain = a.numbers("gainprm", None, default=(1,))
            bias = np.concatenate([a.numbers("biasprm", None, default=(0, 0, 0)), np.zeros(3)])
            kp = float(gain[0])
            if bias[0] != 0 or abs(bias[1] + kp) > 1e-12 * max(1.0, abs(kp)):
                return None
            return kp, -float(bias[2]), 0.0
        return None

    def _reflected_mass(self, joint: Joint, el: Element, label: str) -> float:
        """1 / (M^-1)_jj at the file's configuration: the inertia MuJoCo's dampratio uses.

        A tree with a massless moving body has a singular M; MuJoCo refuses such a model
        ("mass and inertia of moving bodies must be larger than mjMINVAL"), and so does this.
        """
        M, index = joint_space_inertia(self.model, self.model.bodies[joint.child].tree)
        k = index[joint.name]
        scale = float(np.max(np.abs(np.diag(M)))) if M.size else 0.0
        try:
            inv = np.linalg.inv(M) if scale > 0 and np.linalg.cond(M) < 1e12 else None
        except np.linalg.LinAlgError:
            inv = None
        if inv is None or not np.isfinite(inv[k, k]) or inv[k, k] <= 0:
            raise MimicInputError(
                f"{el.where}: actuator {label} uses dampratio, which needs the mass that joint "
                f"'{joint.name}' moves, but a body of its tree moves no mass (MuJoCo refuses that "
                "model too): give each moving body mass, or set kv instead of dampratio"
            )
        return 1.0 / inv[k, k]
