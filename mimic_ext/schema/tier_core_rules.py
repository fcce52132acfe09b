"""Whether NVIDIA's SimReady joint rules can check anything here: tier-core needs ``pxr.PhysxSchema``.

simready-foundation-tier-core's physics-driven-joint rules (DJ.001-DJ.007, FET_022's mimic
requirements among them) do ``from pxr import PhysxSchema``: Kit's compiled PhysX schemas. A pip
environment has physx-usd-schemas instead, which provides ``physx_usd_schemas.PhysxSchema``; the
import fails, tier-core sets ``PhysxSchema = None``, and each of those rules ends in an error on
every joint that carries no requirement, so NVIDIA's validator reports FET_022_STANDARD passed
having checked nothing. Where our validator runs beside tier-core (``mimic-ext validate``, our
rules inside NVIDIA's validator: ``asset_rules``) it says so once instead of leaving that pass
unexplained. Standard library and ``pxr`` only: the CLI calls it.
"""

from __future__ import annotations

import importlib.util
import sys

TIER_CORE = "simready.foundation.tier_core"
#: tier-core's module of the physics-driven-joint rules (the one that imports PhysxSchema)
DRIVEN_JOINT_RULES = f"{TIER_CORE}.capabilities.physics_bodies.physics_driven_joints.validation"
AFFECTED = "DJ.001-DJ.007"

NOTICE = (
    f"NVIDIA's simready-foundation-tier-core is installed, but this OpenUSD has no pxr.PhysxSchema "
    f"(Kit's compiled PhysX schemas; pip's physx-usd-schemas provides physx_usd_schemas.PhysxSchema), "
    f"so its {AFFECTED} rules (physics driven joints, FET_022's mimic checks among them) check nothing "
    f"here: each ends in an error with no requirement and NVIDIA's validator reports FET_022_STANDARD "
    f"passed. Run NVIDIA's validator inside Kit or Isaac Sim, or use `mimic-ext validate --target "
    f"simready` (mimic-ext's own checks of what FET_022 asks of mimic joints)"
)


def tier_core_installed() -> bool:
    try:
        return importlib.util.find_spec(TIER_CORE) is not None
    except (ImportError, ValueError):  # a parent package that is not one, a broken install
        return False


def physx_schema_for_tier_core() -> bool:
    """Whether tier-core's DJ rules have a ``PhysxSchema``: the one their module took when it was
    imported, else whether ``from pxr import PhysxSchema`` works now. mimic_ext.simready's reader,
    in place only while one of NVIDIA's phases runs, does not count (it is no schema module)."""
    rules = sys.modules.get(DRIVEN_JOINT_RULES)
    if rules is not None:
        return getattr(rules, "PhysxSchema", None) is not None
    current = sys.modules.get("pxr.PhysxSchema")
    if current is not None and getattr(current, "__mimic_ext_bridge__", False):
        return False
    try:
        from pxr import PhysxSchema  # noqa: F401
    except ImportError:
        return False
    return True


def unchecked_notice() -> str | None:
    """The one-line notice when tier-core is installed and its DJ rules cannot check anything;
    None when tier-core is absent or has its ``pxr.PhysxSchema`` (inside Kit)."""
    if tier_core_installed() and not physx_schema_for_tier_core():
        return NOTICE
    return None


__all__ = ["AFFECTED", "NOTICE", "physx_schema_for_tier_core", "tier_core_installed", "unchecked_notice"]
