"""The harness's sign rule, said once per report.

Every PhysX relation with a nonzero gearing carries the note "sign rules disagree" (the
harness's ``dir_matches_gear`` reads gearing >= 0 as "with the reference", PhysX's equation the
other way). Printed under every follower it buried the findings that matter (issue 43); the
reports say it once, and the HTML links each such follower to that one paragraph.
"""

from __future__ import annotations

from ..result import RunResult

#: how the harness notes a follower whose sign rules disagree, and where the docs explain it
SIGN_NOTE = "sign rules disagree"
SIGN_DOC = "docs/fet022.md, 'Direction and the two sign rules'"


def sign_rule_note(run: RunResult) -> str | None:
    """The report's one note on the harness's sign rule, for the followers it reads the other way."""
    signs = {
        (st.asset, f.follower)
        for st in run.stages
        for f in st.followers
        if any(n.startswith(SIGN_NOTE) for n in f.notes)
    }
    if not signs:
        return None
    return (
        f"note: for {len(signs)} PhysX follower(s) the harness's dir_matches_gear reads the other way: its "
        "sign rule (gearing >= 0 moves with the reference) is the opposite of PhysX's equation "
        f"(q_f + gearing*q_ref + offset = 0); our direction column uses the schema's. See {SIGN_DOC}"
    )
