"""JUnit XML: one testsuite per stage and engine (named by both), one testcase per follower and engine.

A stage that was skipped (no followers) or could not be swept becomes a single testcase
named after the test, skipped or in error, so every stage shows up in CI. With several
engines each testcase name ends in ``[engine]``.
"""

from __future__ import annotations

import datetime as _dt
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

from ..identity import TEST_NAME
from ..result import ERROR, FAIL, NOT_APPLICABLE, SKIPPED, TIMEOUT, RunResult, SweepResult
from .common import as_run, engines_of, gearing_text, num, read_text, write_text


def _classname(asset: str) -> str:
    stem = Path(asset).stem or "stage"
    return f"FET022.{TEST_NAME}.{stem}"


def _details(f) -> str:
    lines = [
        f"follower {f.follower} ({f.label}), reference {f.reference}"
        + (f", swept via {f.swept}" if f.swept and f.swept != f.reference else "")
        + f", engine {f.engine}",
        f"|gearing| {gearing_text(f)}, motion ratio {num(f.motion_ratio)}, fit slope {num(f.measured_ratio)}, "
        f"error {num(f.ratio_error)} ({num(f.ratio_error_relative, 4)} relative), "
        f"max pointwise error {num(f.relation_max_error, 4)} {f.max_error_unit}, direction {f.direction}, "
        f"dir_matches_gear {f.dir_matches_gear}, read {read_text(f)}",
    ]
    lines += [f"warning: {w}" for w in f.warnings]
    lines += [f"note: {n}" for n in f.notes]
    return "\n".join(lines)


def suite_name(stage: SweepResult) -> str:
    """One suite per stage and engine, named by both (``mimic_joint: data/chain3.usda [warp]``):
    CI groups results by suite name, so two engines' suites of one stage must not share one."""
    return f"{TEST_NAME}: {stage.asset} [{stage.engine or 'engine'}]"


def _suite(stage: SweepResult, timestamp: str, host: str, multi: bool) -> ET.Element:
    cases = []
    tag = f" [{stage.engine}]" if multi else ""
    if stage.followers:
        per_case = stage.timings.get("total_s", 0.0) / len(stage.followers)
        for f in stage.followers:
            tc = ET.Element(
                "testcase", classname=_classname(stage.asset), name=f.follower + tag, time=f"{per_case:.6f}"
            )
            message = "; ".join(f.messages)
            if f.status == FAIL:
                kind = (
                    "ValidatorRejected"
                    if any(m.startswith("rejected by the validator") for m in f.messages)
                    else "NotCoupledByPhysX"
                    if any(m.startswith("PhysX ignores") for m in f.messages)
                    else "GearRatioMismatch"
                )
                ET.SubElement(tc, "failure", message=message, type=kind).text = _details(f)
            elif f.status == ERROR:
                ET.SubElement(tc, "error", message=message, type="SweepError").text = _details(f)
            elif f.status in (SKIPPED, NOT_APPLICABLE):  # not applicable: skipped, with the reason
                ET.SubElement(tc, "skipped", message=message)
            ET.SubElement(tc, "system-out").text = _details(f)
            cases.append(tc)
    else:
        tc = ET.Element(
            "testcase",
            classname=_classname(stage.asset),
            name=TEST_NAME + tag,
            time=f"{stage.timings.get('total_s', 0.0):.6f}",
        )
        if stage.status in (ERROR, TIMEOUT):
            kind = "Timeout" if stage.status == TIMEOUT else "SweepError"
            ET.SubElement(tc, "error", message=stage.reason, type=kind).text = stage.reason
        else:
            ET.SubElement(tc, "skipped", message=stage.reason or "skipped")
        cases.append(tc)
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    for tc in cases:
        for element, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            if tc.find(element) is not None:
                counts[key] += 1
    suite = ET.Element(
        "testsuite",
        name=suite_name(stage),
        tests=str(len(cases)),
        failures=str(counts["failures"]),
        errors=str(counts["errors"]),
        skipped=str(counts["skipped"]),
        time=f"{stage.timings.get('total_s', 0.0):.6f}",
        timestamp=timestamp,
        hostname=host,
    )
    props = ET.SubElement(suite, "properties")
    cfg = stage.config
    for key, value in (
        ("asset", stage.asset),
        ("status", stage.status),
        ("engine", stage.engine),
        ("gear_ratio_tolerance", cfg.get("gear_ratio_tolerance")),
        ("tolerance_mode", cfg.get("tolerance_mode")),
    ):
        ET.SubElement(props, "property", name=key, value=str(value))
    for key, value in {**stage.metrics, **stage.extra_metrics}.items():
        ET.SubElement(props, "property", name=key, value="null" if value is None else repr(value))
    suite.extend(cases)
    if stage.warnings:
        ET.SubElement(suite, "system-out").text = "\n".join(stage.warnings)
    return suite


def format_junit(result: RunResult | SweepResult, timestamp: str | None = None) -> str:
    run = as_run(result)
    timestamp = timestamp or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    host = socket.gethostname()
    root = ET.Element("testsuites", name=f"FET022 {TEST_NAME}")
    multi = len(engines_of(run)) > 1
    suites = [_suite(s, timestamp, host, multi) for s in run.stages]
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.set("time", f"{run.wall_seconds:.6f}")
    root.extend(suites)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(result: RunResult | SweepResult, path: str | Path) -> Path:
    return write_text(path, format_junit(result))
