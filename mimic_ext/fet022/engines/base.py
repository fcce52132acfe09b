"""The engine interface of the sweep: what a simulator is given and what it hands back.

The runner only needs "apply these targets, record these joints' positions"; each
simulator (ours, real PhysX, Newton, MuJoCo; omni.physx inside Kit) does it behind this
one interface, one module each beside this one. An engine must simulate: writing the
relation into the follower would make the test meaningless. It also says what it read
from the stage (the relations as that engine understood them), so that a report can show
where an engine misreads an asset.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ...errors import MimicInputError

if TYPE_CHECKING:  # kept light: the CLI checks engine names before importing numpy or USD
    from ...schema.relation import MimicRelation
    from ..plan import SweepPlan


class EngineNotApplicable(MimicInputError):
    """Raised by ``simulate`` when the engine cannot represent the stage at all (a feature it lacks,
    no schema it reads): the stage's verdict on that engine is "not applicable" with this reason,
    never an error from a simulation that could not mean anything."""


@dataclass
class ReadRelation:
    """One mimic relation as an engine understood it, canonical form and SI units:
    ``q_follower = multiplier * q_leader + offset`` (rad or m). ``note`` says what the
    engine did with it when that differs from the authored relation (dropped, softened,
    flattened to the chain's root, read in other units, ...)."""

    follower: str
    leader: str
    multiplier: float
    offset: float
    hard: bool = True
    note: str = ""


@dataclass
class Trace:
    """What an engine hands back from one run of a plan.

    ``positions``: recorded joint positions (SI), path -> ndarray (num_envs, n_samples),
    sample ``s`` taken after ``plan.sample_steps[s]`` steps (or an array-like whose ``[env]``
    is that environment's samples and ``np.asarray`` the whole table: the warp engine's, which
    keeps one row per part and environment, not per joint and environment). ``missing``: path -> why that
    joint was not simulated. ``relations``: the relations as the engine read them (None
    when it cannot say). ``notes``: warnings about the run (what was changed in the stage
    it read, quantities it ignored). ``timings``: seconds (``*_s``) and counts.
    ``body_positions`` (optional; empty when the engine cannot say): rigid-body prim path ->
    world position of the body's origin (m), ndarray (num_envs, len(body_samples), 3), at
    the samples listed in ``body_samples`` (indices into the joint samples, ascending, the
    first being 0); the sweep's bounding-box explosion check reads them. Any mapping will
    do (the warp engine's computes the positions on first read).
    """

    positions: dict[str, Any] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    relations: list[ReadRelation] | None = None
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    body_positions: Mapping[str, Any] = field(default_factory=dict)
    body_samples: list[int] = field(default_factory=list)
    #: follower path -> why this engine cannot represent its relation (its verdict: not applicable)
    not_applicable: dict[str, str] = field(default_factory=dict)
    #: the runner's index of ``relations`` ((relations, (follower, leader) -> relation)), built on first use
    _read_index: tuple | None = field(default=None, init=False, repr=False, compare=False)


@runtime_checkable
class SweepEngine(Protocol):
    name: str
    #: joint kinds this engine can drive as a swept (reference) joint
    supported_kinds: tuple[str, ...]

    def versions(self) -> dict[str, str]:
        """Library versions to put in the report."""

    def simulate(
        self, stage, plan: SweepPlan, watch: Sequence[str], relations: Sequence[MimicRelation], fix_base: bool = True
    ) -> Trace:
        """Run ``plan`` on ``stage`` (never editing it) and record the positions of ``watch``.

        Environment ``i`` applies ``plan.target_block(step, step + 1)[0, i, j]`` as the position target of
        ``plan.joints[j]`` during each step (with ``plan.joints[j].drive`` when the joint's
        own drive is missing: ``drive.source == "test"``), at ``plan.dt``. Only
        ``relations`` are simulated (the enabled ones the validator accepted); an engine
        that reads relations from the stage itself hides the others with ``stage_without``.
        Raises ``MimicInputError`` when the stage cannot be simulated.
        """


def stage_without(stage, hidden: Sequence[MimicRelation]):
    """A stage over the same root layer whose own session layer removes ``hidden`` relations.

    Removing an applied API in a stronger layer hides the relation from a simulator that
    reads the stage, without touching any authored layer or the caller's session layer.
    """
    from pxr import Sdf, Usd

    session = Sdf.Layer.CreateAnonymous("fet022_session")
    private = Usd.Stage.Open(stage.GetRootLayer(), session, Usd.Stage.LoadAll)
    private.SetEditTarget(Usd.EditTarget(session))
    hide_relations(private, hidden)
    return private


def hide_relations(stage, hidden: Sequence[MimicRelation]) -> None:
    """Remove the applied mimic API of each ``hidden`` relation in ``stage``'s current edit target
    (a layer stronger than the one that applied it), so a simulator reading the stage skips it."""
    from ...schema.authoring import NEWTON_API, PHYSX_API

    for rel in hidden:
        prim = stage.GetPrimAtPath(rel.follower)
        if prim:
            prim.RemoveAppliedSchema(f"{PHYSX_API}:{rel.instance}" if rel.schema == "physx" else NEWTON_API)


_FACTORIES: dict[str, Callable[..., SweepEngine]] = {}
_CHECKS: dict[str, Callable[[], None]] = {}


def register_engine(name: str, factory: Callable[..., SweepEngine], check: Callable[[], None] | None = None) -> None:
    """Make ``get_engine(name)`` build an engine with ``factory(**options)``.

    ``check`` raises ``MimicInputError`` (one line, naming the extra to install) when the
    engine cannot run here; without one, ``check_engine`` builds the engine once to find out.
    """
    _FACTORIES[name] = factory
    if check is not None:
        _CHECKS[name] = check
    else:
        _CHECKS.pop(name, None)


def unregister_engine(name: str) -> None:
    """Forget ``name`` (an extension that registered an engine on startup removes it on shutdown)."""
    _FACTORIES.pop(name, None)
    _CHECKS.pop(name, None)


def engine_names() -> list[str]:
    return sorted(_FACTORIES)


def check_engine_name(spec: str) -> None:
    """Raise ``MimicInputError`` for an engine name nobody registered (without building it)."""
    name = spec.partition(":")[0]
    if name not in _FACTORIES:
        raise MimicInputError(f"unknown sweep engine '{spec}' (available: {', '.join(engine_names())})")


def check_engine(spec: str) -> None:
    """Raise ``MimicInputError`` (one line) when ``spec`` names no engine or one that cannot run
    here, e.g. because its optional peer is not installed: called once before a run, so that a
    missing extra is one message, not one error per stage. A peer is looked up, not imported
    (``import newton`` alone takes seconds, and a sweep on it runs in a worker that imports it
    again): an installed peer whose import fails is named where the engine is built."""
    check_engine_name(spec)
    name, _, device = spec.partition(":")
    if device and device != "cpu":  # a GPU the machine lacks: refused here, not after a run on the CPU
        from ...warp_runtime import device_problem

        problem = device_problem(device)
        if problem:
            raise MimicInputError(f"--engine {spec}: {device}: {problem}")
    if name in _CHECKS:
        _CHECKS[name]()
    else:
        get_engine(spec)


def get_engine(spec: str | SweepEngine = "warp", **options) -> SweepEngine:
    """An engine instance from its name (``"warp"``, ``"warp:cuda:0"``) or the instance itself.

    An engine whose optional peer is not installed raises ``MimicInputError`` naming the
    extra that brings it.
    """
    if not isinstance(spec, str):
        return spec
    check_engine_name(spec)
    name, _, device = spec.partition(":")
    if device:
        options.setdefault("device", device)
    return _FACTORIES[name](**options)


def _module_factory(module: str, cls: str, peers: tuple[str, ...] = ()) -> Callable[..., SweepEngine]:
    """A factory importing the engine's module, and first its ``peers`` (one line naming a peer
    that is absent or whose import fails, and its real error: the diagnosis is made here, where
    the engine runs, since ``check_engine`` only looks the peers up)."""

    def factory(**options) -> SweepEngine:
        import importlib

        from .peer_import import import_peer

        for peer in peers:
            import_peer(peer, module)
        try:
            mod = importlib.import_module(f".{module}", __package__)
        except ModuleNotFoundError as exc:  # the engine's module, or a peer it imports at the top
            raise MimicInputError(
                f"sweep engine '{module}' cannot be loaded: {exc} (install the extra that "
                f"brings it: pip install 'mimic-ext[{module}]')"
            ) from None
        return getattr(mod, cls)(**options)

    return factory


def _warp_available() -> None:
    """Warp and the solver are base dependencies: nothing to check before the run."""


def _peers(extra: str, *modules: str) -> Callable[[], None]:
    """A check that the engine's peer packages are installed (found, not imported: Newton's
    import alone takes seconds), naming the extra that brings them."""

    def check() -> None:
        from .peer_import import find_peer

        for module in modules:
            find_peer(module, extra)

    return check


def _register_peer_engine(name: str, cls: str, *peers: str) -> None:
    register_engine(name, _module_factory(name, cls, peers), check=_peers(name, *peers))


register_engine("warp", _module_factory("warp", "WarpEngine"), check=_warp_available)
_register_peer_engine("physx", "PhysxEngine", "ovphysx", "ovstage")
_register_peer_engine("mujoco", "MujocoEngine", "mujoco")
_register_peer_engine("newton", "NewtonEngine", "newton")
