"""Mimic relations compared as the constraints they are, whoever leads.

``{follower: (leader, multiplier, offset)}`` (``q_f = m q_l + c``) from different tools may
name different leaders for the same constraints: Newton composes chains onto their roots,
the URDF export inverts a leader that lies below a joint it drives. Both describe
the same set of affine constraints; ``as_constraints`` writes every coupled joint against
the set's smallest name, so equal constraints compare equal.
"""

from __future__ import annotations


def as_constraints(relations: dict[str, tuple[str, float, float]]) -> dict[str, tuple[str, float, float]]:
    """{joint: (reference, m, c)} with ``q_joint = m q_reference + c``, for every joint a
    relation couples except each coupled set's reference (its smallest name)."""
    links: dict[str, list[tuple[str, float, float, bool]]] = {}
    for f, (l, m, c) in relations.items():
        links.setdefault(l, []).append((f, m, c, True))
        links.setdefault(f, []).append((l, m, c, False))
    out, seen = {}, set()
    for start in sorted(links):
        if start in seen:
            continue
        component, stack = set(), [start]
        while stack:
            j = stack.pop()
            if j not in component:
                component.add(j)
                stack.extend(o for o, *_ in links[j])
        seen |= component
        ref = min(component)
        affine, stack = {ref: (1.0, 0.0)}, [ref]
        while stack:
            j = stack.pop()
            mj, cj = affine[j]
            for other, m, c, follows in links[j]:
                if other not in affine:
                    affine[other] = (m * mj, m * cj + c) if follows else (mj / m, (cj - c) / m)
                    stack.append(other)
        out.update({j: (ref, *affine[j]) for j in component if j != ref})
    return out
