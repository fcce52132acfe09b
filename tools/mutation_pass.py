"""A small mutation pass over the frame code: do the tests see a transposed rotation or a flipped sign?

Each mutant changes one spot of one target function (a transpose dropped or added on a matrix
product's operand, a matrix product's or a frame composition's operands swapped, an
``inverse()`` dropped, a unary minus dropped, ``+`` and ``-`` swapped, a cross product's
arguments swapped), is written into a private copy of the package, and the
target's fast tests run against it (``-x``, a timeout per mutant). A mutant no test fails on
survives; the pass prints each survivor and the counts. The package in the worktree is never
touched.

    python tools/mutation_pass.py                       # every target, its tests
    python tools/mutation_pass.py --list                # the mutants only, no test run
    python tools/mutation_pass.py --target math3d --tests tests/test_math3d.py
    python tools/mutation_pass.py --base 2241c12 > before.log  # the tests as they were at a revision
    python tools/mutation_pass.py --rerun before.log            # today's tests on its survivors

(``--without`` drops test files from every target's list; ``--base REV`` runs each target's test
files as they were at REV, leaving out those that did not exist: the count before new tests.)
Runtime: about 200 mutants, 5 to 15 s each on two busy cores (30-40 min); ``--target`` narrows it,
``--rerun LOG`` runs only a previous pass's survivors (after adding tests: nothing killed before
can survive now).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MJCF_TESTS = ("tests/test_importer_frames.py", "tests/test_importers.py", "tests/test_importers_mujoco.py")
#: target name -> (module file, functions mutated (qualified names: ``Class.method``; "*": all), tests run)
TARGETS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "stage_reader": (
        "mimic_ext/solver/stage_reader.py",
        (
            "world_pose",
            "_local_frame",
            "_body_mass",
            "read_stage",
            "_free_velocity",
            "_axis_frame",
            "_closure",
            "_closure_pattern",
            "_gravity",
        ),
        ("tests/test_solver_model.py", "tests/test_stage_frames.py", "tests/test_solver_massless.py"),
    ),
    "math3d": (
        "mimic_ext/math3d.py",
        ("*",),
        (
            "tests/test_math3d.py",
            "tests/test_stage_frames.py",
            "tests/test_importer_frames.py",
            "tests/test_solver_model.py",
            "tests/test_importers.py",
        ),
    ),
    "transforms": (
        "mimic_ext/importers/transforms.py",
        ("*",),
        ("tests/test_importer_frames.py", "tests/test_importers.py", "tests/test_importers_geometry.py"),
    ),
    "urdf": (
        "mimic_ext/importers/urdf.py",
        ("_origin", "_inertia", "_joint", "read_urdf"),
        ("tests/test_importer_frames.py", "tests/test_importers.py"),
    ),
    # the MJCF reader's frame code, by module (importers/mjcf_*.py)
    "mjcf_file": ("mimic_ext/importers/mjcf_file.py", ("MjcfFile._rotation", "MjcfFile._pose"), MJCF_TESTS),
    "mjcf_bodies": (
        "mimic_ext/importers/mjcf_bodies.py",
        ("MjcfBodies._items", "MjcfBodies._body", "MjcfBodies._joint"),
        MJCF_TESTS,
    ),
    "mjcf_geoms": (
        "mimic_ext/importers/mjcf_geoms.py",
        ("MjcfGeoms._geom_shape", "MjcfGeoms._mesh_offset", "MjcfGeoms._inertia"),
        MJCF_TESTS,
    ),
    "mjcf_equality": ("mimic_ext/importers/mjcf_equality.py", ("MjcfEqualities._closure",), MJCF_TESTS),
}


@dataclass(frozen=True)
class Mutant:
    target: str
    line: int
    op: str
    start: int  # character offsets of the replaced span in the file
    end: int
    text: str  # what replaces it
    was: str


def _name(m: Mutant) -> str:
    """How a mutant is printed, and found again by ``--rerun``."""
    return f"{TARGETS[m.target][0]}:{m.line} {m.op}: {m.was!r} -> {m.text!r}"


def _offsets(src: str) -> list[int]:
    starts = [0]
    for line in src.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _span(node: ast.AST, starts: list[int]) -> tuple[int, int]:
    return starts[node.lineno - 1] + node.col_offset, starts[node.end_lineno - 1] + node.end_col_offset


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


#: Words that mark a ``*`` as a composition of ``Transform``s (the importers' frames), where
#: swapping the operands is a real mutant; a product of numbers is left alone (a swap of it
#: is the same program).
FRAME_WORDS = ("Transform", "_pose", "frame", "local", "world", "origin", "pose", "inverse", "relpose", "f1")


def _is_frame(text: str) -> bool:
    return any(w in text for w in FRAME_WORDS)


def _functions(tree: ast.Module, names: tuple[str, ...]):
    def walk(body, prefix):
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                q = prefix + node.name
                if "*" in names or q in names:
                    yield node
            elif isinstance(node, ast.ClassDef):
                yield from walk(node.body, prefix + node.name + ".")

    yield from walk(tree.body, "")


def mutants(target: str) -> list[Mutant]:
    path, names, _ = TARGETS[target]
    src = (ROOT / path).read_text()
    starts = _offsets(src)
    out: list[Mutant] = []
    seen: set[tuple[int, int, str]] = set()

    def add(node: ast.AST, op: str, text: str) -> None:
        a, b = _span(node, starts)
        if (a, b, text) not in seen and text != src[a:b]:
            seen.add((a, b, text))
            out.append(Mutant(target, node.lineno, op, a, b, text, src[a:b]))

    def seg(node: ast.AST) -> str:
        a, b = _span(node, starts)
        return src[a:b]

    for fn in _functions(ast.parse(src), names):
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and node.attr == "T" and isinstance(node.ctx, ast.Load):
                add(node, "drop .T", f"({seg(node.value)})")
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                add(node, "swap @", f"({seg(node.right)}) @ ({seg(node.left)})")
                for side in (node.left, node.right):
                    if isinstance(side, ast.Name | ast.Subscript | ast.Call) or (
                        isinstance(side, ast.Attribute) and side.attr != "T"
                    ):
                        add(side, "add .T", f"({seg(side)}).T")
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                add(node, "drop -", f"({seg(node.operand)})")
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
                if _is_text(node.left) or _is_text(node.right):
                    continue
                sym = "-" if isinstance(node.op, ast.Add) else "+"
                add(node, f"{'+' if sym == '-' else '-'} -> {sym}", f"({seg(node.left)}) {sym} ({seg(node.right)})")
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and _is_frame(seg(node)):
                add(node, "swap *", f"({seg(node.right)}) * ({seg(node.left)})")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "inverse"
                and not node.args
            ):
                add(node, "drop inverse()", f"({seg(node.func.value)})")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "cross"
                and len(node.args) == 2
            ):
                add(node, "swap cross", f"{seg(node.func)}({seg(node.args[1])}, {seg(node.args[0])})")
    return out


def _at_revision(rev: str, tests: list[str]) -> tuple[list[str], list[Path]]:
    """``tests`` as they are at git revision ``rev``, written beside them (names pytest does
    not collect on its own); files absent at ``rev`` are dropped. (test paths, files written)"""
    out, written = [], []
    for t in tests:
        shown = subprocess.run(["git", "show", f"{rev}:{t}"], cwd=ROOT, capture_output=True, text=True)
        if shown.returncode != 0:
            continue
        path = ROOT / Path(t).parent / f"mutbase_{Path(t).name}"
        path.write_text(shown.stdout)
        written.append(path)
        out.append(str(path.relative_to(ROOT)))
    return out, written


def run(target: str, mutant_list: list[Mutant], tests: list[str], timeout: float) -> list[tuple[Mutant, str]]:
    """Each mutant against ``tests``; (mutant, outcome) with outcome "killed", "timeout" or "survived"."""
    path = TARGETS[target][0]
    original = (ROOT / path).read_text()
    results = []
    with tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        shutil.copytree(ROOT / "mimic_ext", Path(tmp) / "mimic_ext", ignore=shutil.ignore_patterns("__pycache__"))
        dest = Path(tmp) / path
        env = dict(os.environ, PYTHONPATH=tmp, PYTHONDONTWRITEBYTECODE="1")
        probe = [sys.executable, "-c", "import mimic_ext; print(mimic_ext.__file__)"]
        where = subprocess.run(probe, cwd=tmp, env=env, capture_output=True, text=True).stdout.strip()
        if not where.startswith(tmp):  # a mutant nobody imports survives by default: refuse to count it
            raise SystemExit(f"the tests would import mimic_ext from {where!r}, not the mutants' copy in {tmp}")
        for i, m in enumerate(mutant_list, 1):
            dest.write_text(original[: m.start] + m.text + original[m.end :])
            # run from the copy: ``python -m`` puts the working directory first on sys.path
            cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow"]
            cmd += [str(ROOT / t) for t in tests]
            t0 = time.monotonic()
            try:
                rc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, timeout=timeout).returncode
                outcome = "survived" if rc == 0 else "killed"
            except subprocess.TimeoutExpired:
                outcome = "timeout"  # counted as killed: the mutant broke something
            print(
                f"[{i}/{len(mutant_list)}] {outcome:8s} {_name(m)} ({time.monotonic() - t0:.1f} s)",
                flush=True,
            )
            results.append((m, outcome))
        dest.write_text(original)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", action="append", choices=sorted(TARGETS), help="only these targets (repeatable)")
    ap.add_argument("--tests", nargs="+", help="run these test files instead of the target's list")
    ap.add_argument("--without", nargs="+", default=[], help="leave these test files out (the pass before them)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant (default 120)")
    ap.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    ap.add_argument(
        "--base",
        help="run the test files as they are at this git revision (the pass before new tests: a file absent "
        "there is left out); they are written beside the tests as mutbase_<name> and removed after",
    )
    ap.add_argument(
        "--rerun",
        type=Path,
        help="a previous pass's output: run only the mutants it lists as survived (tests only added since: "
        "a mutant killed then is killed now)",
    )
    args = ap.parse_args(argv)
    survivors, total = [], 0
    before = None
    if args.rerun:
        # the summary's "survived: <mutant>" lines, or the per-mutant "[i/n] survived <mutant> (t s)"
        # lines of a pass that was stopped before its summary
        pattern = re.compile(r"^(?:\s*survived: |\[\d+/\d+\] survived\s+)(mimic_ext/.*?)(?: \([\d.]+ s\))?$")
        before = {m.group(1) for ln in args.rerun.read_text().splitlines() if (m := pattern.match(ln))}
    for target in args.target or list(TARGETS):
        ms = mutants(target)
        if before is not None:
            ms = [m for m in ms if _name(m) in before]
        if args.list:
            for m in ms:
                print(_name(m))
            total += len(ms)
            continue
        tests = [t for t in (args.tests or TARGETS[target][2]) if t not in args.without and (ROOT / t).exists()]
        written = []
        if args.base:
            tests, written = _at_revision(args.base, tests)
        try:
            results = run(target, ms, tests, args.timeout)
        finally:
            for path in written:
                path.unlink(missing_ok=True)
        total += len(results)
        survivors += [m for m, outcome in results if outcome == "survived"]
        print(
            f"{target}: {len(results)} mutants, {sum(o == 'survived' for _, o in results)} survived ({' '.join(tests)})"
        )
    if args.list:
        print(f"{total} mutants")
        return 0
    print(f"\n{total} mutants, {len(survivors)} survived")
    for m in survivors:
        print(f"  survived: {_name(m)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
