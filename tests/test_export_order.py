"""The export's child order for Pinocchio (``urdf_export._topological``), issue 43's faster form.

The old form rescanned every pair at each step (cubic: a 10,000-joint export took over
300 s); the heap form must give the very same order, and None on a cycle, as the old one.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

from mimic_ext.importers.urdf_export import _topological


def _old_order(children, pairs):
    """The former algorithm, kept here as the reference."""
    remaining = sorted(children, key=lambda j: j.name)
    out = []
    while remaining:
        blocked = {later for earlier, later in pairs if any(j.name == earlier for j in remaining)}
        free = [j for j in remaining if j.name not in blocked]
        if not free:
            return None
        out.append(free[0])
        remaining.remove(free[0])
    return out


def test_heap_order_equals_the_old_one_on_random_cases():
    rng = random.Random(43)
    cycles = 0
    for _ in range(300):
        n = rng.randint(1, 12)
        children = [SimpleNamespace(name=f"j{rng.randint(0, 99):02d}_{k}") for k in range(n)]
        names = [c.name for c in children]
        pairs = {(rng.choice(names), rng.choice(names)) for _ in range(rng.randint(0, n))}
        pairs = {(a, b) for a, b in pairs if a != b}
        want = _old_order(children, pairs)
        got = _topological(children, pairs)
        cycles += want is None
        assert (None if got is None else [c.name for c in got]) == (None if want is None else [c.name for c in want]), (
            pairs
        )
    assert 0 < cycles < 300  # both outcomes were exercised


def _old_unique(used: set[str], name: str) -> str:
    out, k = name, 1
    while out in used:
        out, k = f"{name}_{k}", k + 1
    used.add(out)
    return out


def test_unique_names_as_the_former_scan():
    """``_UniqueNames`` resumes each name's suffix where it stopped (the scan from 1 was quadratic
    on 5,000 links named ``palm``); the names it gives are the former ones, clashes included."""
    from mimic_ext.importers.urdf_export import _UniqueNames

    rng = random.Random(7)
    names = _UniqueNames()
    used: set[str] = set()
    for _ in range(2000):
        base = rng.choice(["palm", "palm_1", "palm_3", "fix", "fix_2_1", "fix_2", "lead"])
        assert names(base) == _old_unique(used, base)
