"""Where the physics of a sweep comes from: a small interface and a registry of backends.

The runner only needs "apply these targets, record these joints' positions"; the Warp
solver does it in plain Python, and the Kit layer may register a PhysX backend with
``register_backend``. A backend must simulate: writing the relation into the follower
would make the test meaningless.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence, runtime_checkable

from ..errors import MimicInputError

if TYPE_CHECKING:   # kept light: the CLI checks backend names before importing numpy or USD
    from ..schema.relation import MimicRelation
    from .plan import SweepPlan


@dataclass
class Trace:
    """Recorded joint positions (SI), one row per environment, one column per sample."""

    positions: dict[str, Any] = field(default_factory=dict)   # path -> ndarray (num_envs, n_samples)
    missing: dict[str, str] = field(default_factory=dict)            # path -> why it was not simulated
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@runtime_checkable
class SweepBackend(Protocol):
    name: str
    #: joint kinds this backend can drive as a swept (reference) joint
    supported_kinds: tuple[str, ...]

    def versions(self) -> dict[str, str]:
        """Library versions to put in the report."""

    def simulate(self, stage, plan: "SweepPlan", watch: Sequence[str], relations: Sequence["MimicRelation"],
                 fix_base: bool = True) -> Trace:
        """Run ``plan`` on ``stage`` (never editing it) and record the positions of ``watch``.

        Only ``relations`` are simulated (the enabled ones the validator accepted); a
        backend that reads relations from the stage itself can hide the others with
        ``stage_without``. Raises ``MimicInputError`` when the stage cannot be simulated.
        """


def stage_without(stage, hidden: Sequence["MimicRelation"]):
    """A stage over the same root layer whose own session layer removes ``hidden`` relations.

    Removing an applied API in a stronger layer hides the relation from a simulator that
    reads the stage, without touching any authored layer or the caller's session layer.
    """
    from pxr import Sdf, Usd

    from ..schema.authoring import NEWTON_API, PHYSX_API

    session = Sdf.Layer.CreateAnonymous("fet022_session")
    private = Usd.Stage.Open(stage.GetRootLayer(), session, Usd.Stage.LoadAll)
    private.SetEditTarget(Usd.EditTarget(session))
    for rel in hidden:
        prim = private.GetPrimAtPath(rel.follower)
        if prim:
            prim.RemoveAppliedSchema(f"{PHYSX_API}:{rel.instance}" if rel.schema == "physx" else NEWTON_API)
    return private


_FACTORIES: dict[str, Callable[..., SweepBackend]] = {}


def register_backend(name: str, factory: Callable[..., SweepBackend]) -> None:
    """Make ``get_backend(name)`` build a backend with ``factory(**options)``."""
    _FACTORIES[name] = factory


def backend_names() -> list[str]:
    return sorted(_FACTORIES)


def check_backend_name(spec: str) -> None:
    """Raise ``MimicInputError`` for a backend name nobody registered (without building it)."""
    name = spec.partition(":")[0]
    if name not in _FACTORIES:
        raise MimicInputError(f"unknown sweep backend '{spec}' (available: {', '.join(backend_names())})")


def get_backend(spec: str | SweepBackend = "warp", **options) -> SweepBackend:
    """A backend instance from its name (``"warp"``, ``"warp:cuda:0"``) or the instance itself."""
    if not isinstance(spec, str):
        return spec
    name, _, device = spec.partition(":")
    if name not in _FACTORIES:
        raise MimicInputError(f"unknown sweep backend '{spec}' (available: {', '.join(backend_names())})")
    if device:
        options.setdefault("device", device)
    return _FACTORIES[name](**options)


def _warp_factory(**options) -> SweepBackend:
    from .warp_backend import WarpBackend

    return WarpBackend(**options)


register_backend("warp", _warp_factory)
