"""NVIDIA's SimReady validator (simready-validate + simready-foundation-tier-core) on a stage,
without Kit: the ``pxr.PhysxSchema`` bridge it needs lives here, never in the package.

tier-core does ``from pxr import PhysxSchema`` (Kit's compiled module); a pip environment has
the codeless ``physx_usd_schemas.PhysxSchema`` instead, whose classes are no ``TfType``, so
``prim.HasAPI(PhysxSchema.PhysxMimicJointAPI)`` raises and DJ.001-007 end in uncaught errors that
carry no requirement (the profile then reports them as passed). The bridge hands tier-core each
schema class as its registered name (a ``str``, which ``HasAPI`` takes) that still constructs the
codeless class. ``PhysxJointAPI`` is not declared by physx-usd-schemas (so DJ.005 cannot see a
joint's ``physxJoint:maxJointVelocity`` here), and DJ.008-010 need Isaac's robot schema
(``usd.schema.isaac``), which pip does not have: those rules end in errors, listed by
``unchecked``.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections import defaultdict

PROFILE = ("Robot-Gripper", "3.0.0")


class _SchemaName(str):
    """A codeless schema class as its registered name: ``prim.HasAPI`` reads the name, calling it
    constructs the class, anything else is the class's."""

    _cls: type

    def __new__(cls, codeless: type) -> _SchemaName:
        out = str.__new__(cls, codeless._schemaName)  # type: ignore[attr-defined]
        out._cls = codeless
        return out

    def __call__(self, *args):
        return self._cls(*args)

    def __getattr__(self, name):
        return getattr(self._cls, name)


def _bridge_module() -> types.ModuleType:
    from physx_usd_schemas import PhysxSchema
    from physx_usd_schemas.PhysxSchema import codeless_api

    bridge = types.ModuleType("pxr.PhysxSchema")
    for name in codeless_api.__all__:
        cls = getattr(PhysxSchema, name)
        setattr(bridge, name, _SchemaName(cls) if hasattr(cls, "_schemaName") else cls)
    bridge.Tokens = PhysxSchema.Tokens  # type: ignore[attr-defined]
    return bridge


@contextlib.contextmanager
def bridged():
    """``pxr.PhysxSchema`` as tier-core expects it, from physx-usd-schemas, for the block only
    (whatever stood there before, e.g. mimic_ext.simready's own narrower bridge, comes back)."""
    import pxr

    module = sys.modules.get("pxr.PhysxSchema")
    attr = getattr(pxr, "PhysxSchema", None)
    bridge = _bridge_module()
    sys.modules["pxr.PhysxSchema"] = bridge
    pxr.PhysxSchema = bridge  # type: ignore[attr-defined]
    tier_core = sys.modules.get(_VALIDATION)
    saved = getattr(tier_core, "PhysxSchema", None) if tier_core else None
    if tier_core is not None:
        tier_core.PhysxSchema = bridge  # imported once, bound at its import
    try:
        yield bridge
    finally:
        if tier_core is not None:
            tier_core.PhysxSchema = saved
        if module is None:
            sys.modules.pop("pxr.PhysxSchema", None)
        else:
            sys.modules["pxr.PhysxSchema"] = module
        if attr is None:
            if hasattr(pxr, "PhysxSchema"):
                delattr(pxr, "PhysxSchema")
        else:
            pxr.PhysxSchema = attr  # type: ignore[attr-defined]


#: tier-core's driven-joint rules, which bind ``PhysxSchema`` when first imported
_VALIDATION = "simready.foundation.tier_core.capabilities.physics_bodies.physics_driven_joints.validation"
_INITIALISED = False


def validate(stage) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(failures, unchecked): NVIDIA's failures on ``stage`` by short requirement code (``DJ.002``),
    and the rules that ended in an uncaught error (requirement unknown), by rule class name."""
    global _INITIALISED
    with bridged():
        from simready.validate import initialize, validate_stage

        if not _INITIALISED:
            initialize([], [], [])
            _INITIALISED = True
        with bridged():  # again: initialize imported tier-core's rules, which bind it at import
            result = validate_stage(stage, *PROFILE)
    assert result is not None, f"profile {PROFILE} is not registered"
    failures: dict[str, list[str]] = defaultdict(list)
    unchecked: dict[str, list[str]] = defaultdict(list)
    for issue in result.issues + result.soft_issues:
        if issue.requirement is None:
            rule = getattr(issue, "rule", None)
            unchecked[getattr(rule, "__name__", str(rule))].append(str(issue.message))
        else:
            failures[issue.requirement.code.removeprefix("com.nvidia.simready.")].append(str(issue.message))
    return dict(failures), dict(unchecked)
