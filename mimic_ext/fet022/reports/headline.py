"""The headline of every view: NVIDIA's SimReady verdict per engine, above our port's findings.

``RunResult.simready`` holds NVIDIA's verdicts (its MIM phase run on our engines:
``mimic_ext.simready``); the headline reads "SimReady mimic_joint 1.1.0: pass" per engine. Those
verdicts decide the exit code; our port's checks are findings beside them unless ``--strict``
(docs/fet022.md, "Whose verdict decides").
"""

from __future__ import annotations

from ..identity import TEST_NAME, TEST_VERSION
from ..result import RunResult

NOT_RUN = "not_run"


def engine_verdict(statuses: list[str]) -> str:
    """fail > pass > skipped over one engine's stages (Kit's roll-up); not run when none ran."""
    ran = [s for s in statuses if s != NOT_RUN]
    if not ran:
        return "not run"
    if "fail" in ran:
        return "fail"
    return "pass" if "pass" in ran else "skipped"


def headlines(run: RunResult) -> list[str]:
    """One line per engine: "SimReady mimic_joint 1.1.0: pass" (with the engine and, over several
    stages, the counts); empty when NVIDIA's phase was not run at all."""
    if not run.simready:
        return []
    per_engine: dict[str, list[dict]] = {}
    for v in run.simready:
        per_engine.setdefault(v["engine"], []).append(v)
    lines = []
    several = len(per_engine) > 1
    for engine, vs in per_engine.items():
        verdict = engine_verdict([v["status"] for v in vs])
        detail = []
        if several or len(vs) > 1:
            detail.append(engine)
        if len(vs) > 1:
            counts: dict[str, int] = {}
            for v in vs:
                counts[v["status"]] = counts.get(v["status"], 0) + 1
            detail.append(", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items()))
        elif verdict == "not run":
            detail.append(vs[0].get("message", ""))
        lines.append(f"SimReady {TEST_NAME} {TEST_VERSION}: {verdict}" + (f" ({': '.join(detail)})" if detail else ""))
    return lines


def findings_line(run: RunResult) -> str:
    """What our port's verdicts below the headline mean for the exit code."""
    if not run.simready:
        return "NVIDIA's phase was not run: our port's verdicts decide the exit code."
    if run.strict:
        return "Our port's findings below fail the run too (--strict)."
    return "Our port's findings below do not decide the exit code (--strict makes them)."
