"""The layout of the step's per-environment work space, declared once.

Every scalar and small matrix an environment's step keeps between its phases shares one row
of one work array (``Scratch.ws[e, md.o_X + i]``): each separate Warp array an environment
touches costs address set-up in every kernel. The fields are listed here (name, size, meaning)
in the order the step uses them; ``layout`` turns them into the ``ModelData.o_X`` offsets. A
wrong size would silently let one field run into its neighbour, so ``guards=True`` (models
built while ``MIMIC_EXT_DEBUG_WORKSPACE=1`` is set, or ``model.workspace_guards = True`` then
``model.sync()``) puts one sentinel entry after every field, and the solver checks after every
call that no step wrote one (``WorkSpaceOverrunError`` names the field that overran).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

#: Turns the guard entries on for every model built while it is set (any value but "", "0").
DEBUG_ENV = "MIMIC_EXT_DEBUG_WORKSPACE"
#: What a guard entry holds: a value no step computes (finite, so a NaN check passes it by).
SENTINEL = -1.2345e33


@dataclass(frozen=True)
class Dims:
    """The sizes the fields are declared in."""

    n: int  # velocity DOFs (``Model.layout``: the 1-DOF joints, then each multi-DOF link's)
    n1: int  # 1-DOF joints (the first n1 DOFs; the per-joint fields)
    links: int  # links of the articulation trees
    midpoint: bool  # a loop model: the bias again at the mid-step velocity
    k: int  # solve-space columns (the independent DOFs)
    m: int  # loop-closure rows
    nnz: int  # entries of the reduced system's LDL^T factor pattern
    pairs: int  # composite-pass pairs of the mass matrix (0: a deep tree, M x formed in O(n))
    slots: int  # column responses the joint rows keep per step
    rel_rows: int  # relation rows (at least 1)
    soft: bool  # a mass-only factor HM is kept (compliant relations, exact drives)
    cones: int = 0  # spherical joints with a cone limit
    loop_cones: int = 0  # of them, loop-closing joints (a general row each)
    contacts: bool = False
    contact_cap: int = 0  # contacts that get rows, per environment
    contact_block: int = 0  # entries per contact (``contact_rows.block_size``)
    active_size: int = 0  # entries of the active block (``contact_rows.active_size``)
    path_size: int = 0  # entries after it (``contact_rows.path_size``)


@dataclass(frozen=True)
class Field:
    name: str
    size: Callable[[Dims], int]
    meaning: str


def _soft(size: Callable[[Dims], int]) -> Callable[[Dims], int]:
    return lambda d: size(d) if d.soft else 0


#: The joint and relation step's fields, in order (``ModelData.o_<name>``).
FIELDS: tuple[Field, ...] = (
    Field("u0", lambda d: d.n, "per DOF: the position-correction velocity u0 of u = S v + u0"),
    Field("f", lambda d: d.n, "per DOF: the step's right-hand side M u + dt (tau - h) (+ drives)"),
    Field("Mp", lambda d: d.pairs, "per composite-pass pair: the mass matrix entry (shallow trees)"),
    Field("HB", lambda d: d.nnz, "the reduced system S^T A S before this step's joint rows"),
    Field("H", lambda d: d.nnz, "the reduced system of the step, factored in place (LDL^T)"),
    Field("kH", lambda d: d.k, "per column: the pivot of H's factor (0: a dependent column)"),
    Field("HM", _soft(lambda d: d.nnz), "the reduced system with the compliant relations' terms, factored"),
    Field("kHM", _soft(lambda d: d.k), "per column: the pivot of HM's factor"),
    Field("bhB", lambda d: d.k, "per column: the reduced right-hand side before the joint rows"),
    Field("bh", lambda d: d.k, "per column: the reduced right-hand side of the step"),
    Field("v", lambda d: d.k, "per column: the solve-space velocity v"),
    Field("tk", lambda d: d.n, "a vector over DOFs or columns the solves reuse within a phase"),
    Field("res", lambda d: d.n, "per DOF: the residual A u+ - f the coupling impulses are read from"),
    Field("lam", lambda d: d.n1, "per joint: its row's impulse (limit, velocity cap, friction, drive bound)"),
    Field("drv", lambda d: 3 * d.n1, "per joint: the drive's implicit gain, its force and its bound"),
    Field("W", lambda d: 2 * d.n1, "per joint: its row's response W and 1 / W"),
    Field("rslot", lambda d: d.k + 1, "per column: its slot in resp (-1: none); then the slots used"),
    Field("resp", lambda d: d.k * d.slots, "the kept column responses H^-1 e_c, k each"),
    Field("rtmp", lambda d: d.k, "a column response computed but not kept"),
    Field("soft", lambda d: 2 * d.rel_rows, "per relation: a compliant row's implicit gain and its bias"),
    Field("gsum", lambda d: d.k, "per column: the rows' generalized impulse so far, in solve space"),
    Field("JL", lambda d: d.m * d.n, "per loop row: its Jacobian J_L over the DOFs"),
    Field("JLr", lambda d: d.m * d.k, "per loop row: J_L S, over the columns"),
    Field("tL", lambda d: d.m, "per loop row: its target velocity -(erp / dt) e - J_L u0, with its rate term"),
    Field("tL0", lambda d: d.m, "per loop row: the target before its rate term (rows.loop_rate_targets)"),
    Field("JLd", lambda d: d.m * d.n, "per loop row: its rate dJ_L/dt at the step's start velocity, over the DOFs"),
    Field("eL", lambda d: d.m, "per loop row: the closure error at the step's start"),
    Field("um", lambda d: d.n if d.midpoint else 0, "per DOF: the mid-step velocity (u + u+) / 2 of the bias"),
    Field("aA", lambda d: 6 * d.links if d.midpoint else 0, "per link: its velocity-product acceleration at u"),
    Field("YT", lambda d: d.m * d.k, "per loop row: (H^-1 J_L^T)^T"),
    Field("SL", lambda d: d.m * d.m, "the loops' Schur complement J_L H^-1 J_L^T, factored"),
    Field("keep", lambda d: d.m, "per loop row: 1 kept, 0 dropped as dependent on the others"),
    Field("lamL", lambda d: d.m, "per loop row: its impulse"),
    Field("tm", lambda d: d.m, "a vector over the loop rows the solves reuse"),
    Field("dpos", lambda d: 3 * d.n1, "per joint: an exact drive's effective inertia and position-term coefficients"),
    Field("YM", _soft(lambda d: d.m * d.k), "YT for the compliant system HM"),
    Field("SLM", _soft(lambda d: d.m * d.m), "SL for the compliant system HM"),
    Field("keepM", _soft(lambda d: d.m), "keep for the compliant system HM"),
    Field("cone", lambda d: 5 * d.cones, "per cone limit: its impulse, swing angle and row direction (rows.CONE_*)"),
    Field(
        "coneJ",
        lambda d: d.loop_cones * (d.n + d.k + 1),
        "per loop-closing cone: its row J over the DOFs, J S over the columns, then J u0 (rows.loop_cone_row)",
    ),
)

#: A contact model's fields after them (``kernels.contact_rows``).
CONTACT_FIELDS: tuple[Field, ...] = (
    Field(
        "crow",
        lambda d: d.contact_cap * d.contact_block,
        "per contact: its three rows (J, J S, C (J S)^T) and the scalars of contact_rows.SLOTS",
    ),
    Field("cimp", lambda d: d.n, "per DOF: the contact rows' generalized impulse"),
    Field("cD", lambda d: d.active_size, "the active block of D with its vectors (contact_rows.active_size)"),
    Field("cpath", lambda d: d.path_size, "the solve's velocity path length, then a solve-space velocity snapshot"),
)


def offset_names(contacts: bool) -> list[str]:
    """The ``ModelData`` offset fields, ``o_<name>`` for each field in the table's order: the
    kernels' struct declares exactly these (``kernels.structs``), so a new field needs no second list."""
    return ["o_" + f.name for f in FIELDS + (CONTACT_FIELDS if contacts else ())]


@dataclass(frozen=True)
class Layout:
    """Each field's ``(offset, size)``, the row's length, and the guard entries' offsets
    (``guards``: field name -> the entry after it)."""

    fields: Mapping[str, tuple[int, int]]
    size: int
    guards: Mapping[str, int]


def layout(dims: Dims, guards: bool = False) -> Layout:
    """The offsets of ``FIELDS`` (and ``CONTACT_FIELDS`` for a contact model), packed in order;
    with ``guards``, one sentinel entry after each field."""
    off, fields, marks = 0, {}, {}
    for f in FIELDS + (CONTACT_FIELDS if dims.contacts else ()):
        size = int(f.size(dims))
        if size < 0:
            raise ValueError(f"work space field {f.name}: size {size} < 0 for {dims}")
        fields[f.name] = (off, size)
        off += size
        if guards:
            marks[f.name] = off
            off += 1
    return Layout(fields, max(off, 1), marks)


def check_disjoint(fields: Mapping[str, tuple[int, int]], size: int) -> None:
    """Raise naming the first two fields that overlap, or a field past the row's end."""
    spans = sorted((o, o + s, name) for name, (o, s) in fields.items() if s > 0)
    for (a0, a1, a), (b0, _b1, b) in itertools.pairwise(spans):
        if b0 < a1:
            raise ValueError(f"work space fields {a} [{a0}, {a1}) and {b} [{b0}, ...) overlap")
    for o0, o1, name in spans:
        if o0 < 0 or o1 > size:
            raise ValueError(f"work space field {name} [{o0}, {o1}) lies outside the row of {size} entries")


def guards_requested() -> bool:
    """Whether ``MIMIC_EXT_DEBUG_WORKSPACE`` asks for guards."""
    return os.environ.get(DEBUG_ENV, "").strip() not in ("", "0")


def overrun(guards: Mapping[str, int], rows: np.ndarray) -> list[str]:
    """The fields whose guard entry no longer holds the sentinel in some environment
    (``rows``: the work array as numpy, environments by entries)."""
    names = list(guards)
    if not names:
        return []
    held = np.isclose(rows[:, [guards[n] for n in names]], SENTINEL, rtol=1e-6, atol=0.0).all(axis=0)
    return [n for n, ok in zip(names, held) if not ok]
