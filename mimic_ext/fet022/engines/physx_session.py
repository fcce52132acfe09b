"""Real NVIDIA PhysX, headless, through ``ovphysx``: step a stage with per-step DOF targets.

How ovphysx 0.7 is driven here (read from its wheel: ``ovphysx/docs``, ``ovphysx/samples``,
``api.pyi``, ``types.py``):

* **Process setup.** ``ovstage.population.register_usd_schemas`` with the codeless PhysX
  schema folders of ``physx-usd-schemas`` (``PhysxSchema``, ``OmniUsdPhysicsDeformableSchema``,
  found by ``ovphysx.samples.python_samples.schema_support.physx_schema_paths``) and
  ``ovphysx.newton_schema_root()``, once, before the first population; without it
  PhysxMimicJointAPI is not read. ``PhysX.set_cpu_mode(True)`` before an instance is created
  selects the CPU pipeline (a process-wide switch); GPU is the default where CUDA is present,
  chosen with ``PhysX(active_cuda_gpus="0")``. ``set_global_config(GlobalConfigKey.NUM_THREADS,
  0)`` before the instance runs PhysX's CPU tasks on the calling thread: for one small
  articulation that is far faster than handing each step to worker threads (measured:
  benchmarks/RESULTS.md, "PhysX (ovphysx) threads"), so it is our default (``threads``).
* **Stage.** ovphysx does not read a ``pxr`` stage: ``ovstage`` populates its own data-plane
  stage from USD (``open_usd(stage, path, ...)`` or, used here, ``open_usd_from_string`` with
  the USDA text of our private flattened copy, so no temporary file is written), at a
  caller-chosen *ordinal*; ``advance_write_floor(ordinal).wait()`` seals it, then
  ``physx.attach_ovstage(stage, read_ordinal=...)`` builds the PhysX scene (a task: wait on it).
  ``PopulationDomain.ALL`` resolves nested world transforms.
* **Batched environments.** ``physx.clone(source, targets, anchor_transforms)`` copies a
  subtree (our robot root) inside PhysX only (no USD prims), articulations rebuilt, before
  the first step; each anchor is the target root's absolute world pose
  ``(px, py, pz, qx, qy, qz, qw)``. On the CPU clones are not collision-isolated, so they are
  placed apart, along an axis where a copy steps as the source does (``physx_layout``: a clone
  is the robot moved there, and loop-closing joints make PhysX's motion depend on where the
  robot stands); where no axis is safe ``run_physx`` runs the environments one after another.
* **DOF tensors.** ``physx.create_tensor_binding(prim_paths=[articulation roots],
  tensor_type=TensorType.ARTICULATION_DOF_POSITION | _POSITION_TARGET | ...)`` gives an
  ``[articulations, DOFs]`` view (float32, radians or stage distance) read into / written from
  NumPy arrays; ``dof_names`` are the joints' prim names, rows follow ``prim_paths``. These
  bindings are deprecated in 0.7 in favour of ``PhysX.read`` / ``PhysX.write`` sessions (which
  speak degrees and one group per attribute) but are the cheapest per-step path on the CPU.
  The first binding operation warms PhysX up (one internal initial step); we call
  ``warmup()`` explicitly after cloning, so the plan's step count is the count simulated.
* **Logs** go to Carbonite (the console) unless ``enable_python_logging()`` routes them to
  the ``ovphysx`` Python logger; they are collected here as notes (e.g. PhysX's default mass
  for a body without mass or colliders) instead of being printed over our reports.

``run_physx`` is the reusable entry point (solver cross-checks, benchmarks);
``PhysxSession`` is the stepping object behind it.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import MimicInputError
from ...native_stderr import quiet_native_stderr
from ...schema import joints
from .physx_layout import Layout, layout

EXTRA = "pip install 'mimic-ext[physx]'"

#: PhysX log lines that only say the CPU pipeline was chosen (our choice, not the asset's).
_CPU_CHATTER = (
    "GPU broadphase requires a CUDA context manager",
    "EnvIds requested but gpu",
    "Auto-warmup: performing initial simulation step",
)

_process = {"schemas": False}


def import_ovphysx():
    """(ovphysx, ovstage), or MimicInputError naming the extra that installs them."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import ovphysx
            import ovstage
    except ImportError as exc:
        raise MimicInputError(
            f"the physx engine needs ovphysx and ovstage ({exc.name or exc} is not installed): {EXTRA}"
        ) from None
    return ovphysx, ovstage


def versions() -> dict[str, str]:
    ovphysx, ovstage = import_ovphysx()
    return {"ovphysx": str(ovphysx.__version__), "ovstage": str(getattr(ovstage, "__version__", "?"))}


def _register_schemas(ovphysx, ovstage) -> None:
    if _process["schemas"]:
        return
    from ovphysx.samples.python_samples.schema_support import physx_schema_paths

    if not ovstage.population.available():
        raise MimicInputError(
            f"ovstage's USD population bridge is unavailable in this installation: reinstall with {EXTRA}"
        )
    ovstage.population.register_usd_schemas(
        [*[str(p) for p in physx_schema_paths()], str(ovphysx.newton_schema_root())]
    )
    _process["schemas"] = True


class _Collect(logging.Handler):
    """Warnings and errors, each kind once (PhysX repeats a message per body and per clone)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.kinds: dict[str, list] = {}

    def emit(self, record: logging.LogRecord) -> None:
        msg = " ".join(record.getMessage().split())
        if any(c in msg for c in _CPU_CHATTER):
            return
        kind = re.sub(r"/[\w/.-]+", "<path>", msg)
        self.kinds.setdefault(kind, [msg, 0])[1] += 1

    @property
    def lines(self) -> list[str]:
        return [msg + (f" (and {n - 1} more like it)" if n > 1 else "") for msg, n in self.kinds.values()]


@contextlib.contextmanager
def _captured_log(ovphysx) -> Iterator[_Collect]:
    """PhysX's warnings into a list rather than onto the console (restored afterwards)."""
    handler = _Collect()
    logger = logging.getLogger("ovphysx")
    old = (logger.level, logger.propagate)
    ovphysx.enable_python_logging()
    ovphysx.set_global_config(ovphysx.GlobalConfigKey.DEFAULT_LOG_OUTPUT, False)
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    try:
        yield handler
    finally:
        with contextlib.suppress(Exception):
            ovphysx.flush_log()
        logger.removeHandler(handler)
        logger.setLevel(old[0])
        logger.propagate = old[1]
        ovphysx.disable_python_logging()
        ovphysx.set_global_config(ovphysx.GlobalConfigKey.DEFAULT_LOG_OUTPUT, True)


class PhysxSession:
    """A PhysX instance stepping one populated stage, ``num_envs`` copies of its robot.

    ``usda``: the stage text PhysX reads. ``articulations``: the articulation root prims of
    environment 0 (``PhysicsArticulationRootAPI``). ``joints``: joint prim name -> path for
    the joints of environment 0 (DOF names are prim names). ``rigid_bodies``: paths of
    environment 0's rigid bodies outside any articulation (a grasped box) whose world poses
    ``rigid_poses`` reads. Values in and out are SI (radians, metres); ``meters_per_unit``
    converts prismatic DOFs and positions.
    """

    def __init__(
        self,
        usda: str,
        articulations: Sequence[str],
        joints_by_name: Mapping[str, str],
        env: Layout | None = None,
        device: str = "cpu",
        meters_per_unit: float = 1.0,
        prismatic: Iterable[str] = (),
        name: str = "mimic_ext",
        threads: int = 0,
        bodies_by_name: Mapping[str, str] | None = None,
        rigid_bodies: Sequence[str] = (),
    ):
        self.ovphysx, self.ovstage = import_ovphysx()
        self.layout = env or Layout(None, [], [])
        self.num_envs = 1 + len(self.layout.targets)
        self.mpu = float(meters_per_unit)
        self.log: list[str] = []
        log_cm = _captured_log(self.ovphysx)
        self._log_cm: contextlib.AbstractContextManager[_Collect] | None = log_cm
        self._collect = log_cm.__enter__()
        self._bindings: list = []
        self.physx: Any = None  # ovphysx.PhysX and ovstage.Stage once opened
        self.stage: Any = None
        self.rigid: list[str] = []
        self._rigid: tuple[Any, np.ndarray, np.ndarray] | None = None
        try:
            self._open(usda, articulations, joints_by_name, device, set(prismatic), name, threads)
            if bodies_by_name:
                self._open_links(articulations, bodies_by_name)
            self._open_rigid(rigid_bodies)
        except BaseException:
            self.close()
            raise

    # -------------------------------------------------------------- set-up
    def _open(self, usda, articulations, joints_by_name, device, prismatic, name, threads) -> None:
        ovphysx, ovstage = self.ovphysx, self.ovstage
        from ovphysx.types import TensorType

        _register_schemas(ovphysx, ovstage)
        cpu = device == "cpu"
        ovphysx.PhysX.set_cpu_mode(cpu)
        ovphysx.set_global_config(ovphysx.GlobalConfigKey.NUM_THREADS, int(threads))
        gpus = None if cpu else (device.partition(":")[2] or "0")
        self.physx = ovphysx.PhysX(active_cuda_gpus=gpus) if gpus is not None else ovphysx.PhysX()
        self.stage = ovstage.Stage(name)
        ovstage.population.open_usd_from_string(self.stage, usda, ordinal=1, domains=ovstage.PopulationDomain.ALL)
        self.stage.advance_write_floor(ordinal=1).wait()
        self.physx.wait_task(self.physx.attach_ovstage(self.stage, read_ordinal=1))
        if self.layout.targets:
            # companion subtrees join the robot's environments by the same ids in every call (only
            # GPU dynamics use the ids to isolate environments; on the CPU the anchors keep them apart)
            ids = {"env_ids": list(range(1, self.num_envs))} if self.layout.companions else {}
            for lay in (self.layout, *self.layout.companions):
                self.physx.wait_task(self.physx.clone(lay.source, lay.targets, anchor_transforms=lay.anchors, **ids))
        self.physx.warmup()
        self.columns: dict[str, tuple[int, int]] = {}  # joint path -> (articulation, DOF column)
        self.ambiguous: dict[str, str] = {}
        self._pos, self._tgt, self._q, self._t = [], [], [], []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # tensor bindings: see the module doc
            for a, root in enumerate(articulations):
                rows = [self.layout.env_path(root, e) for e in range(self.num_envs)]
                pos = self.physx.create_tensor_binding(
                    prim_paths=rows, tensor_type=TensorType.ARTICULATION_DOF_POSITION
                )
                tgt = self.physx.create_tensor_binding(
                    prim_paths=rows, tensor_type=TensorType.ARTICULATION_DOF_POSITION_TARGET
                )
                self._bindings += [pos, tgt]
                if pos.count != self.num_envs:
                    raise MimicInputError(
                        f"PhysX built {pos.count} articulation(s) at {root} for {self.num_envs} "
                        f"environment(s): it did not take the stage's articulation there"
                    )
                order = [rows.index(p) for p in pos.prim_paths]
                names = list(pos.dof_names)
                for col, dof in enumerate(names):
                    path = joints_by_name.get(dof)
                    if path is None:
                        continue
                    if names.count(dof) > 1 or path in self.columns:
                        self.ambiguous[path] = (
                            f"PhysX names its DOFs by prim name and '{dof}' names more than one DOF of the articulation"
                        )
                        self.columns.pop(path, None)
                        continue
                    self.columns[path] = (a, col)
                self._pos.append((pos, order))
                self._tgt.append(tgt)
                self._q.append(np.zeros(pos.shape, np.float32))
                t = np.zeros(tgt.shape, np.float32)
                tgt.read(t)
                self._t.append(t)
        self.scale = {p: (self.mpu if p in prismatic else 1.0) for p in self.columns}

    def _open_links(self, articulations, bodies_by_name) -> None:
        """Link pose bindings, for the world positions of the articulations' bodies."""
        from ovphysx.types import TensorType

        self.links: dict[str, tuple[int, int]] = {}  # body path -> (articulation, link column)
        self._poses, self._p = [], []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for a, root in enumerate(articulations):
                rows = [self.layout.env_path(root, e) for e in range(self.num_envs)]
                pose = self.physx.create_tensor_binding(prim_paths=rows, tensor_type=TensorType.ARTICULATION_LINK_POSE)
                self._bindings.append(pose)
                for col, body in enumerate(pose.body_names):
                    if body in bodies_by_name:
                        self.links[bodies_by_name[body]] = (a, col)
                self._poses.append((pose, [rows.index(p) for p in pose.prim_paths]))
                self._p.append(np.zeros(pose.shape, np.float32))

    def _open_rigid(self, bodies: Sequence[str]) -> None:
        """One pose binding over every environment's copy of each rigid body named."""
        from ovphysx.types import TensorType

        self.rigid = list(bodies)
        if not self.rigid:
            return
        rows = [self.layout.env_path(b, e) for b in self.rigid for e in range(self.num_envs)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pose = self.physx.create_tensor_binding(prim_paths=rows, tensor_type=TensorType.RIGID_BODY_POSE)
        self._bindings.append(pose)
        if pose.count != len(rows):
            missing = sorted(set(rows) - set(pose.prim_paths))
            raise MimicInputError(
                f"PhysX holds {pose.count} of the {len(rows)} rigid bodies asked for (not a rigid body of "
                f"the PhysX scene: {', '.join(missing[:3]) or '?'})"
            )
        index = {p: i for i, p in enumerate(pose.prim_paths)}
        order = [index[r] for r in rows]
        self._rigid = (
            pose,
            np.asarray(order).reshape(len(self.rigid), self.num_envs),
            np.zeros(pose.shape, np.float32),
        )

    def rigid_poses(self) -> dict[str, np.ndarray]:
        """World poses of the ``rigid_bodies``, (num_envs, 7) each, environment order: position (m)
        and quaternion (x, y, z, w)."""
        if self._rigid is None:
            return {}
        pose, order, buf = self._rigid
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pose.read(buf)
        out = {}
        for b, rows in zip(self.rigid, order):
            v = buf[rows].astype(float)
            v[:, :3] *= self.mpu
            out[b] = v
        return out

    # ------------------------------------------------------------ stepping
    def set_targets(self, values: Mapping[str, np.ndarray]) -> None:
        """Position targets (SI), one per environment, for the joints named; others keep theirs."""
        touched = set()
        for path, v in values.items():
            a, col = self.columns[path]
            _, order = self._pos[a]
            self._t[a][order, col] = np.asarray(v, np.float32) / self.scale[path]
            touched.add(a)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for a in touched:
                self._tgt[a].write(self._t[a])

    def step(self, dt: float) -> None:
        self.physx.step_sync(dt)

    def positions(self, paths: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Joint positions (SI) per environment, environment order."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for (pos, _), q in zip(self._pos, self._q):
                pos.read(q)
        out = {}
        for path in self.columns if paths is None else paths:
            a, col = self.columns[path]
            _, order = self._pos[a]
            out[path] = self._q[a][order, col].astype(float) * self.scale[path]
        return out

    # ----------------------------------------- one articulation's rows, as PhysX holds them
    # (for a caller that works per articulation, as omni.physics.tensors does: Kit's stand-in)
    def dof_names(self, articulation: int) -> list[str]:
        """DOF names (joint prim names) of articulation ``articulation``, in PhysX's column order."""
        return list(self._pos[articulation][0].dof_names)

    def dof_rows(self, articulation: int, targets: bool = False) -> np.ndarray:
        """DOF positions, or position targets, of one articulation as PhysX holds them (rad or
        stage units), (num_envs, DOFs), environment order."""
        pos, order = self._pos[articulation]
        if targets:
            return self._t[articulation][order].astype(float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pos.read(self._q[articulation])
        return self._q[articulation][order].astype(float)

    def write_target_rows(self, articulation: int, rows: np.ndarray) -> None:
        """Every DOF's position target of one articulation (rad or stage units), (num_envs, DOFs)."""
        _, order = self._pos[articulation]
        self._t[articulation][order] = np.asarray(rows, np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            self._tgt[articulation].write(self._t[articulation])

    def link_names(self, articulation: int) -> list[str]:
        """Link (body prim) names of one articulation in PhysX's order; [] without ``bodies_by_name``."""
        if not getattr(self, "_poses", None):
            return []
        return list(self._poses[articulation][0].body_names)

    def link_rows(self, articulation: int) -> np.ndarray:
        """World poses of one articulation's links, (num_envs, links, 7): position (stage units) and
        quaternion (x, y, z, w), environment order."""
        pose, order = self._poses[articulation]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pose.read(self._p[articulation])
        return self._p[articulation][order].astype(float)

    def body_positions(self) -> dict[str, np.ndarray]:
        """World positions (m) of the bodies' origins, (num_envs, 3) each, environment order."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for (pose, _), p in zip(self._poses, self._p):
                pose.read(p)
        return {
            path: self._p[a][self._poses[a][1], col, :3].astype(float) * self.mpu
            for path, (a, col) in self.links.items()
        }

    def close(self) -> None:
        for b in self._bindings:
            with contextlib.suppress(Exception):
                b.destroy()
        self._bindings = []
        if self.physx is not None:
            with contextlib.suppress(Exception):
                if self.stage is not None and self.physx.is_stage_attached(self.stage):
                    self.physx.wait_task(self.physx.detach_ovstage())
        if self.stage is not None:
            with contextlib.suppress(Exception):
                self.stage.destroy()
        if self.physx is not None:
            with contextlib.suppress(Exception):
                self.physx.destroy()
        self.physx = self.stage = None
        if self._log_cm is not None:
            self._log_cm.__exit__(None, None, None)
            self.log = list(self._collect.lines)
            self._log_cm = None

    def __enter__(self) -> PhysxSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class PhysxRun:
    """What ``run_physx`` returns: positions path -> (num_envs, n_samples) SI, and what happened."""

    positions: dict[str, np.ndarray] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    #: with ``bodies=True``: rigid-body path -> world position of its origin (m), (num_envs, n_samples, 3)
    body_positions: dict[str, np.ndarray] = field(default_factory=dict)


def joint_names(stage, under: str | None = None) -> tuple[dict[str, str], set[str], set[str]]:
    """(prim name -> path of the 1-DOF joints, names used twice, prismatic paths), within ``under``."""
    from pxr import Usd

    found: dict[str, list[str]] = {}
    prismatic = set()
    for prim in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        kind = joints.joint_kind(prim)
        path = str(prim.GetPath())
        if kind not in (joints.REVOLUTE, joints.PRISMATIC, joints.D6):
            continue
        if under and not (path == under or path.startswith(under.rstrip("/") + "/")):
            continue
        found.setdefault(prim.GetName(), []).append(path)
        if kind == joints.PRISMATIC:
            prismatic.add(path)
    unique = {n: ps[0] for n, ps in found.items() if len(ps) == 1}
    return unique, {n for n, ps in found.items() if len(ps) > 1}, prismatic


#: Steps of targets taken at a time from a target function (long runs never hold them all).
BLOCK = 2048


def body_names(stage, under: str | None = None) -> dict[str, str]:
    """Prim name -> path of the rigid bodies (within ``under``) whose name is used once."""
    from pxr import Usd, UsdPhysics

    found: dict[str, list[str]] = {}
    for prim in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        path = str(prim.GetPath())
        if prim.HasAPI(UsdPhysics.RigidBodyAPI) and (not under or path.startswith(under.rstrip("/") + "/")):
            found.setdefault(prim.GetName(), []).append(path)
    return {n: ps[0] for n, ps in found.items() if len(ps) == 1}


def run_physx(
    stage,
    steps: int,
    dt: float,
    targets,
    record: Sequence[str] | None = None,
    num_envs: int = 1,
    sample_steps: Iterable[int] | None = None,
    device: str = "cpu",
    clone_source: str | None = None,
    spacing: float | None = None,
    threads: int = 0,
    bodies: bool = False,
    along: str | None = None,
) -> PhysxRun:
    """Step ``stage`` (a ``Usd.Stage`` PhysX can simulate as it is) ``steps`` times on real PhysX.

    ``targets``: joint path -> position targets (SI), shape (steps,) or (steps, num_envs), row k
    applied during step k; or a function ``(start, stop) -> {path: array (stop - start,
    num_envs)}`` asked for one block of steps at a time. ``record``: joint paths to return
    (default: every target joint). ``sample_steps``: step counts after which positions are
    taken (default: after every step; 0 = before the first). ``num_envs`` copies of
    ``clone_source`` (default: the prim holding every body and joint) are cloned ``spacing``
    stage units apart, along the first axis where a copy steps as the source does
    (``physx_layout.faithful_axes``); when no such prim or no such axis exists the environments
    run one after another, each where the robot stands. ``along``: clone along this axis
    whatever it holds (a note says when a copy may then step differently). ``threads``: PhysX CPU worker threads (0: the calling thread, fastest for small scenes).
    ``bodies``: also return the articulation bodies' world positions at the samples. The
    stage is read, never edited: prepare it first (``engines.prepared``) when it needs a
    scene or drives. Returns positions path -> (num_envs, len(sample_steps)).
    """
    from . import prepared

    if callable(targets):
        block_of = targets
        first = block_of(0, min(steps, 1))
    else:
        table = {p: np.asarray(v, float).reshape(steps, -1) for p, v in targets.items()}
        block_of = lambda a, b: {p: v[a:b] for p, v in table.items()}  # noqa: E731
        first = table
    record = list(record if record is not None else first)
    samples = list(range(1, steps + 1)) if sample_steps is None else [int(s) for s in sample_steps]
    out = PhysxRun()
    t0 = time.perf_counter()
    with quiet_native_stderr():
        usda = stage.Flatten().ExportToString()
    roots = [str(p.GetPath()) for p in prepared.articulation_roots(stage)]
    if not roots:
        raise MimicInputError(
            f"{stage.GetRootLayer().identifier}: no PhysicsArticulationRootAPI: PhysX simulates "
            f"mimic joints only inside an articulation"
        )
    source = clone_source if clone_source is not None else prepared.robot_root(stage)
    mpu = joints.meters_per_unit(stage)
    if num_envs > 1 and spacing is None and source is not None:
        spacing = max(1.0 / mpu, 2.0 * prepared.extent(stage, source) + 0.5 / mpu)
    by_name, twice, prismatic = joint_names(stage, source if num_envs > 1 else None)
    links = body_names(stage, source if num_envs > 1 else None) if bodies else None
    one_by_one = [([e], Layout(None, [], [])) for e in range(num_envs)]
    if num_envs > 1 and source is None:
        runs = one_by_one
        out.notes.append(
            "no single prim holds every body and joint of the stage, so PhysX cannot clone the robot: "
            f"the {num_envs} environments were run one after another"
        )
    else:
        env = layout(stage, source, num_envs, spacing or 0.0, along=along)
        runs = [(list(range(num_envs)), env)]
        if not env.faithful and along is None:
            runs = one_by_one
            out.notes.append(
                f"the {num_envs} environments were run one after another where the robot stands, not cloned: "
                f"PhysX's copies of {source} would not step like environment 0 ({env.unfaithful})"
            )
        elif not env.faithful:
            out.notes.append(env.note)
    pos = {p: np.full((num_envs, len(samples)), np.nan) for p in record}
    sim_s = 0.0
    for envs, env_layout in runs:
        session = PhysxSession(
            usda,
            roots,
            by_name,
            env_layout,
            device=device,
            meters_per_unit=mpu,
            prismatic=prismatic,
            threads=threads,
            bodies_by_name=links,
        )
        try:
            for p in record:
                if p not in session.columns:
                    name = p.rsplit("/", 1)[-1]
                    out.missing[p] = session.ambiguous.get(p) or (
                        f"PhysX names DOFs by prim name and '{name}' is used by more than one joint"
                        if name in twice
                        else "not a degree of freedom of any PhysX articulation (not simulated by PhysX)"
                    )
            absent = [p for p in first if p not in session.columns]
            if absent:
                raise MimicInputError(
                    f"cannot drive {', '.join(absent)} on PhysX: "
                    f"{out.missing.get(absent[0]) or 'not a PhysX articulation DOF'}"
                )
            live = [p for p in record if p in session.columns]
            if bodies:
                for b in session.links:
                    out.body_positions.setdefault(b, np.full((num_envs, len(samples), 3), np.nan))
            out.timings["build_s"] = out.timings.get("build_s", 0.0) + time.perf_counter() - t0
            t1 = time.perf_counter()

            def sample(k: int, session=session, live=live, envs=envs) -> None:
                # this run's session, DOFs and environments bound now (the defaults)
                for p, v in session.positions(live).items():
                    pos[p][envs, k] = v
                if bodies:
                    for b, v in session.body_positions().items():
                        out.body_positions[b][envs, k] = v

            k = 0
            if samples and samples[0] == 0:
                sample(0)
                k = 1
            for start in range(0, steps, BLOCK):
                stop = min(steps, start + BLOCK)
                block = {p: np.asarray(v, float).reshape(stop - start, -1) for p, v in block_of(start, stop).items()}
                block = {
                    p: (v[:, envs] if v.shape[1] > 1 else np.repeat(v, len(envs), axis=1)) for p, v in block.items()
                }
                for i in range(stop - start):
                    session.set_targets({p: v[i] for p, v in block.items()})
                    session.step(dt)
                    while k < len(samples) and samples[k] == start + i + 1:
                        sample(k)
                        k += 1
            sim_s += time.perf_counter() - t1
        finally:
            session.close()
            t0 = time.perf_counter()
        out.notes.extend(f"PhysX: {line}" for line in session.log if f"PhysX: {line}" not in out.notes)
    out.timings["simulate_s"] = sim_s
    out.timings["steps"] = float(steps)
    out.positions = {p: v for p, v in pos.items() if p not in out.missing}
    return out
