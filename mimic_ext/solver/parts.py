"""Independent parts of a stage: sets of links whose motions cannot affect each other.

Without contacts, two links act on each other only through the tree (a joint between them, a
moving ancestor they share), a loop closure or a mimic relation; a link welded to the world
passes nothing on. So the links split into parts: the subtrees that hang from the world (or
float), joined where a closure or a relation connects them. A part's joints move exactly as
they would among the others, whatever the others do, so a caller that drives one joint (the
FET022 sweep) needs to simulate only that joint's part: a model of the whole stage per
environment would cost every environment the whole stage.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from typing import cast

import numpy as np

from .stage_reader import FREE, JointSpec, StageSpec


def independent_parts(spec: StageSpec, relations: Iterable) -> list[list[int]] | None:
    """Link indices of each part, ascending, parts in the order of their first link; None when a
    relation names a joint that is no link's joint (then only a model of the whole stage can
    say what is wrong with it)."""
    n = len(spec.links)
    up = list(range(n))

    def find(i: int) -> int:
        while up[i] != i:
            up[i] = up[up[i]]
            i = up[i]
        return i

    def join(a: int, b: int) -> None:
        if a >= 0 and b >= 0:
            ra, rb = find(a), find(b)
            if ra != rb:
                up[max(ra, rb)] = min(ra, rb)

    for i, link in enumerate(spec.links):
        join(i, link.parent)
    for c in spec.closures:
        join(c.link_a, c.link_b)
    link_of = {lk.joint.path: i for i, lk in enumerate(spec.links) if lk.joint is not None}
    for rel in relations:
        f, l = link_of.get(str(rel.follower)), link_of.get(str(rel.leader))
        if f is None or l is None:
            return None
        join(f, l)
    parts: dict[int, list[int]] = {}
    for i in range(n):
        parts.setdefault(find(i), []).append(i)
    return list(parts.values())


def part_spec(spec: StageSpec, links: list[int]) -> StageSpec:
    """The stage read as if only ``links`` (one part, ascending) were on it. Its warnings are
    the whole stage's business (left empty here); bodies welded to the world are not copied
    (nothing of a part moves them)."""
    new = {old: k for k, old in enumerate(links)}
    out_links = [
        replace(spec.links[i], parent=new.get(spec.links[i].parent, -1), bodies=list(spec.links[i].bodies))
        for i in links
    ]
    closures = [
        replace(c, link_a=new.get(c.link_a, -1), link_b=new.get(c.link_b, -1))
        for c in spec.closures
        if c.link_a in new or c.link_b in new
    ]
    return replace(spec, links=out_links, warnings=[], closures=closures, world_bodies={})


#: Digits (in metres and SI units) to which two parts must agree to be called copies: far
#: below float32's 1e-7 resolution, far above the 1e-16 of subtracting two placements.
COPY_DIGITS = 10


def _num(a) -> tuple:
    return tuple(np.round(np.asarray(a, dtype=float).ravel(), COPY_DIGITS).tolist())


def _cone(joint) -> tuple:
    """A spherical joint's cone (a link's or a closure's): two parts that differ only there move
    differently."""
    axis = () if joint.cone_axis is None else _num(joint.cone_axis)
    return (round(joint.cone, COPY_DIGITS), round(joint.cone1, COPY_DIGITS), axis)


def copy_key(part: StageSpec, relations: Iterable, extra: tuple = ()) -> tuple[tuple, np.ndarray]:
    """(key, anchor): two parts with equal keys are translated copies of each other (the same
    links, joints, drives, masses, frames, closures and relations, placed ``anchor`` apart),
    so with the same gravity their joints move identically. ``extra``: what else the caller
    applies per part (test drives, targets), which must agree too."""
    anchor = np.array(part.links[0].X_p[:3, 3], dtype=float)

    def placed(t: np.ndarray, in_world: bool) -> tuple:
        t = np.array(t, dtype=float)
        if in_world:
            t[:3, 3] -= anchor
        return _num(t)

    index = {lk.joint.path: i for i, lk in enumerate(part.links) if lk.joint is not None}
    links = []
    for lk in part.links:
        joint = (
            None
            if lk.joint is None
            else tuple(
                v if isinstance(v, (str, bool)) else round(float(v), COPY_DIGITS)
                for k, v in vars(lk.joint).items()
                if k != "path"
            )
        )
        links.append(
            (
                lk.parent,
                lk.jtype,
                joint,
                placed(lk.X_p, lk.parent < 0),
                _num(lk.X_c),
                _num(lk.axis),
                placed(lk.pose0, lk.jtype == FREE),
                tuple(_num(pose) for _, pose in lk.bodies),
                round(lk.mass, COPY_DIGITS),
                _num(lk.com),
                _num(lk.inertia),
                lk.restore,
                _cone(lk),
            )
        )
    closures = tuple(
        (
            c.kind,
            c.link_a,
            placed(c.frame_a, c.link_a < 0),
            c.link_b,
            placed(c.frame_b, c.link_b < 0),
            c.mask,
            c.angmode,
            _cone(c),
        )
        for c in part.closures
    )
    rels = tuple(
        (
            index[str(r.follower)],
            index[str(r.leader)],
            float(r.multiplier),
            float(r.offset),
            float(r.natural_frequency),
            float(r.damping_ratio),
        )
        for r in relations
    )
    return (tuple(links), closures, rels, _num(part.gravity), extra), anchor


def structure_key(part: StageSpec, relations: Iterable, extra: tuple = ()) -> tuple | None:
    """Parts with equal keys have the same shape (links, joint types, which joint properties are
    set, which joints the relations join) whatever their numbers, so one model of several of them
    takes, for each, the code paths its own model would (the step's model-wide switches: rows,
    compliant relations, the mass product's form). None for a part that is not batched: one
    with loop closures (their rows are dense over the model) or a floating base. ``extra``:
    what else the caller applies per part (which joints it drives), which must agree too."""
    if part.closures or any(lk.joint is None for lk in part.links):  # a floating base, a spherical joint
        return None
    index = {lk.joint.path: i for i, lk in enumerate(part.links) if lk.joint is not None}
    links = tuple(
        (
            lk.parent,
            lk.jtype,
            math.isfinite(j.lower),
            math.isfinite(j.upper),
            math.isfinite(j.max_velocity),
            j.friction > 0,
            j.has_drive,
            j.stiffness > 0 or j.damping > 0,
            math.isfinite(j.max_force),
        )
        for lk in part.links
        for j in (cast(JointSpec, lk.joint),)  # only FREE links have none, refused above
    )
    rels = tuple(
        (index[str(r.follower)], index[str(r.leader)], float(r.natural_frequency) > 0 and float(r.damping_ratio) > 0)
        for r in relations
    )
    return links, rels, extra


def translated(part: StageSpec, by) -> StageSpec:
    """The part moved by ``-by`` (m): its roots' joint frames, which hold its world placement
    (``part_spec`` leaves no world-welded bodies or closures that would hold more)."""
    shift = np.asarray(by, dtype=float)

    def moved(t: np.ndarray) -> np.ndarray:
        t = np.array(t, dtype=float)
        t[:3, 3] -= shift
        return t

    return replace(part, links=[replace(lk, X_p=moved(lk.X_p)) if lk.parent < 0 else lk for lk in part.links])


def joined(parts: list[StageSpec]) -> StageSpec:
    """One spec holding ``parts`` (of one stage) side by side: independent trees of one model,
    each part's links contiguous and in its own order."""
    links, start = [], 0
    for part in parts:
        links += [replace(lk, parent=lk.parent + start if lk.parent >= 0 else -1) for lk in part.links]
        start += len(part.links)
    return replace(parts[0], links=links, closures=[], warnings=[], world_bodies={})
