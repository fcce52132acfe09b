"""mimic_ext's validator as rules of NVIDIA's omniverse-asset-validator.

``python -m omni.asset_validator ASSET`` (and ``import omni.asset_validator``) loads every
plugin of the entry-point group ``omni.asset_validator``; mimic-ext declares
``MimicAssetValidatorPlugin`` there (pyproject.toml), so with both installed the
validator's own command reports our findings, our codes first in each message. Two rules,
category ``MimicJoints``:

- ``MimicJointChecker``: every finding of :func:`mimic_ext.schema.validate`, one issue
  each, its requirement (and ``Issue.code``) the finding's code (``MIMIC_ZERO_GEARING``...).
- ``MimicApiCheck``: SimReady's ``DJ.007`` (mimic-api-check, feature FET022 driven joints),
  reported from the same findings: exactly one reference joint that can be followed,
  a finite nonzero gearing, a known instance (axis), limits on both joints that the
  relation respects, neither joint excluded from the articulation, no contradicting or
  locking cycles, chains noted. It covers prims with a PhysxMimicJointAPI and their
  references. Where the published rule asks more than PhysX does it follows PhysX: a
  ``naturalFrequency`` of 0 is a hard relation (PhysxMimicJointAPI's documentation), not
  a failure. When another installed plugin implements DJ.007 (SimReady's own
  simready-foundation-tier-core, which registers it as ``com.nvidia.simready.DJ.007``; any
  ``*.DJ.007`` or plain ``DJ.007`` counts, whichever plugin starts first) that one is left in
  charge: ``MimicApiCheck`` is not registered, or is withdrawn when NVIDIA's arrives later, so
  one DJ.007 runs, never two that disagree on the same joints.

Where tier-core is installed without ``pxr.PhysxSchema`` (a pip environment: ``tier_core_rules``),
the plugin logs one warning when it starts, saying that NVIDIA's DJ.001-DJ.007 check nothing
there and what to do, so their "passed" is not silent.

Severities: our errors are the validator's failures, warnings its warnings, infos its
infos (its ``ERROR`` means a rule crashed). A stage our checker cannot read (a
``MimicInputError``, such as ``metersPerUnit = 0``) is one failure saying so.

This is the one module outside ``mimic_ext/kit/`` that imports ``omni``: it is
``omni.asset_validator`` from the pip package omniverse-asset-validator (the ``validator``
extra), a peer like Newton, not Kit. The import happens only when the validator starts the
plugin, never when mimic_ext is imported.
"""

from __future__ import annotations

import importlib
import logging
from functools import cache

from pxr import Usd

from .. import __version__
from ..errors import MimicInputError
from .authoring import read_relations
from .relation import PHYSX
from .tier_core_rules import unchecked_notice
from .validation import CODES, ERROR, WARNING, Finding, validate

_LOG = logging.getLogger(__name__)

CATEGORY = "MimicJoints"
DJ_007 = "DJ.007"
DJ_007_VERSION = "0.1.0"
DJ_007_DOC = (
    "https://nvidia.github.io/simready-foundation/capabilities/physics_bodies/physics_driven_joints/"
    "requirements/mimic-api-check.html"
)
#: our codes that are DJ.007's checks (mimic-api-check's "additional checks")
DJ_007_CODES = frozenset(
    {
        "MIMIC_REFERENCE_MISSING",
        "MIMIC_REFERENCE_NOT_FOUND",
        "MIMIC_REFERENCE_NOT_JOINT",
        "MIMIC_REFERENCE_TYPE",
        "MIMIC_SELF_REFERENCE",
        "MIMIC_ZERO_GEARING",
        "MIMIC_NONFINITE",
        "MIMIC_INSTANCE_NAME",
        "MIMIC_NO_LIMITS",
        "MIMIC_RANGE_OUTSIDE_LIMITS",
        "MIMIC_EXCLUDED_FROM_ARTICULATION",
        "MIMIC_CONTRADICTION",
        "MIMIC_CYCLE_GAIN",
        "MIMIC_CHAIN",
        "MIMIC_SCHEMAS_DISAGREE",
    }
)


def _av():
    """The validator's API module. usd-validation-nvidia (which simready-foundation-tier-core brings)
    is omniverse-asset-validator's successor: it replaces ``omni/asset_validator/__init__.py`` with a
    re-export of itself and starts the plugins while that module is still importing, so the rule
    classes are taken from it directly where it is installed (``omni.asset_validator`` would be
    partially initialised then: NVIDIA's own default plugin fails the same way)."""
    try:
        return importlib.import_module("usd_validation_nvidia")
    except ImportError:
        return importlib.import_module("omni.asset_validator")


def _requirement(code: str, version: str, name: str, message: str, path: str | None):
    from omni.capabilities import Requirement  # ships with omniverse-asset-validator

    return Requirement(code=code, version=version, display_name=name, message=message, path=path)


@cache
def requirements() -> dict:
    """Requirement objects the validator files issues under: each of our codes, and DJ.007."""
    doc = "docs/conventions.md#validator-codes"
    out = {
        code: _requirement(code, __version__, code.lower().replace("_", "-"), description, doc)
        for code, (_, description) in CODES.items()
    }
    out[DJ_007] = _requirement(
        DJ_007,
        DJ_007_VERSION,
        "mimic-api-check",
        "Mimic API configuration must be properly validated for coordinated joint motion.",
        DJ_007_DOC,
    )
    return out


def _report(rule, finding: Finding, requirement, message: str, at) -> None:
    if finding.severity == ERROR:
        rule._AddFailedCheck(message=message, at=at, requirement=requirement)
    elif finding.severity == WARNING:
        rule._AddWarning(message=message, at=at, requirement=requirement)
    else:
        rule._AddInfo(message=message, at=at, requirement=requirement)


def _findings(rule, stage: Usd.Stage) -> list[Finding] | None:
    """Our findings on the stage; an unreadable stage becomes one failure and None."""
    try:
        return validate(stage)
    except MimicInputError as exc:
        rule._AddFailedCheck(message=f"mimic joints cannot be checked: {exc}", at=stage)
        return None


def _at(stage: Usd.Stage, path: str):
    prim = stage.GetPrimAtPath(path)
    return prim if prim and prim.IsValid() else stage


@cache
def rule_classes() -> tuple[type, type]:
    """(MimicJointChecker, MimicApiCheck), built on first use so that omni is imported only then."""
    base = _av().BaseRuleChecker
    reqs = requirements()

    # the validator's base class, imported at run time: mypy cannot check a class built on it
    class MimicJointChecker(base):  # type: ignore[misc,valid-type]
        """Mimic joints (PhysxMimicJointAPI, NewtonMimicAPI) checked by mimic-ext: every relation PhysX or
        Newton would ignore, reject or fight (codes MIMIC_*; docs/conventions.md)."""

        def CheckStage(self, usdStage):
            for f in _findings(self, usdStage) or []:
                _report(self, f, reqs[f.code], f"{f.code}: {f.message}", _at(usdStage, f.path))

    class MimicApiCheck(base):  # type: ignore[misc,valid-type]
        """SimReady DJ.007 mimic-api-check for PhysxMimicJointAPI, from mimic-ext's checks: one valid
        reference joint, finite nonzero gearing, known axis, limits on both joints that the relation
        respects, both joints in the articulation, no contradicting or locking cycles."""

        def CheckStage(self, usdStage):
            findings = _findings(self, usdStage)
            if not findings:
                return
            physx = [r for r in read_relations(usdStage) if r.schema == PHYSX]
            covered = {r.follower for r in physx} | {r.leader for r in physx if r.leader}
            for f in findings:
                if f.code in DJ_007_CODES and f.path in covered:
                    _report(self, f, reqs[DJ_007], f"{DJ_007} {f.code}: {f.message}", _at(usdStage, f.path))

    return MimicJointChecker, MimicApiCheck


def is_dj_007(code: str) -> bool:
    """SimReady's mimic-api-check under any registered name: ``DJ.007`` or ``<prefix>.DJ.007``."""
    return code == DJ_007 or code.endswith("." + DJ_007)


def other_dj_007(registry, ours: type) -> type | None:
    """The rule another plugin registered for DJ.007 (whatever its name), or None."""
    for requirement in list(registry):
        if is_dj_007(requirement.code):
            owner = registry.get_validator(requirement)
            if owner is not None and owner is not ours:
                return owner
    return None


class MimicAssetValidatorPlugin:
    """The entry point omniverse-asset-validator starts (its ``PluginProtocol``)."""

    def __init__(self) -> None:
        self._registered: list[type] = []
        self._listener = None

    def on_startup(self) -> None:
        notice = unchecked_notice()
        if notice:  # once per validator process, before any stage: NVIDIA's DJ rules beside ours check nothing
            _LOG.warning("mimic-ext: %s", notice)
        av = _av()
        checker, dj007 = rule_classes()
        reqs = requirements()
        ours = [reqs[code] for code in CODES]
        self._register(av, checker, ours)
        owner = other_dj_007(av.RequirementsRegistry(), dj007)
        if owner is not None:
            _LOG.info("%s is implemented by %s; mimic-ext's MimicApiCheck is not registered", DJ_007, owner.__name__)
            return
        self._register(av, dj007, [reqs[DJ_007]])
        if hasattr(av, "add_registry_requirement_callback"):  # NVIDIA's may start after us
            self._listener = av.add_registry_requirement_callback(self._defer_dj_007)

    def _defer_dj_007(self) -> None:
        av = _av()
        dj007 = rule_classes()[1]
        if dj007 not in self._registered or other_dj_007(av.RequirementsRegistry(), dj007) is None:
            return
        self._registered.remove(dj007)  # first: unregistering calls this again
        av.unregister_rule(dj007)
        av.unregister_requirements(dj007)
        _LOG.info("%s is now implemented by another plugin; mimic-ext's MimicApiCheck is withdrawn", DJ_007)

    def _register(self, av, rule: type, reqs: list) -> None:
        av.register_requirements(*reqs)(rule)
        av.register_rule(CATEGORY)(rule)
        self._registered.append(rule)

    def on_shutdown(self) -> None:
        av = _av()
        self._listener = None
        for rule in reversed(self._registered):
            av.unregister_rule(rule)
            av.unregister_requirements(rule)
        self._registered.clear()


__all__ = [
    "CATEGORY",
    "DJ_007",
    "DJ_007_CODES",
    "MimicAssetValidatorPlugin",
    "is_dj_007",
    "other_dj_007",
    "requirements",
    "rule_classes",
]
