"""``sweep --source``: a stage whose relations differ from its robot description fails.

Why: each engine honours the relation authored in the USD and the sweep judges against it, so
a wrong offset or sign passes on every engine; the comparison with the URDF/MJCF file
(``importers.source_check``) is the only check that can fail it. Its differences become
findings of the followers they concern, on every engine, so every report says them.
"""

from __future__ import annotations

from .result import FAIL, NOT_APPLICABLE, PASS, SweepResult


def apply_source_check(results: list[SweepResult], comparison) -> None:
    """Fail the followers (and stages) of ``results`` where ``comparison`` found a difference."""
    bad = comparison.mismatches
    by_path = {r.stage_path: r for r in bad if r.stage_path}
    for st in results:
        seen = set()
        for f in st.followers:
            row = by_path.get(f.follower)
            if row is None or f.status == NOT_APPLICABLE:
                continue
            seen.add(row.follower)
            f.messages.append(f"differs from its source {comparison.source}: {'; '.join(row.problems)}")
            f.status = FAIL if f.status == PASS else f.status
        st.settle_status()
        for row in bad:
            if row.follower not in seen:
                st.warnings.append(
                    f"{row.follower} differs from its source {comparison.source}: {'; '.join(row.problems)}"
                )
                st.status = FAIL if st.status == PASS else st.status
