"""The bad-input corpus of issue 15: every case's inputs, built into a folder, and what must happen.

Nothing here is committed as data: each case's inputs are made at test time (from the
project's own data/ samples and a few lines of URDF, MJCF and USD text) into a folder of
its own, so the repository stays small and the cases stay readable. A case is a
``mimic-ext`` command, the exit code it must give, a regular expression that its one
error line on stderr must match, and the files it may write; every other file in its
folder must be byte-identical afterwards (and nothing new may appear: no ``-`` file,
no temporary). ``tests/test_cli_corpus.py`` runs them all.

Look at the inputs: ``python tests/corpus/build_corpus.py OUT_DIR`` builds every case's
folder under OUT_DIR and prints the commands.

``owner`` names the helper branch whose fix makes a case pass (issue 15 is shared by area);
``harden`` cases pass on this branch alone.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"

#: how a case runs: in this process through ``cli.main`` (fast), or in a subprocess with a
#: timeout and a memory cap (whatever could hang, exhaust memory, or needs its own process)
INPROC, SUBPROCESS = "inproc", "subprocess"


@dataclass(frozen=True)
class Case:
    name: str
    section: str  # the issue-15 heading it comes from
    owner: str  # the helper whose branch fixes it
    argv: tuple[str, ...]  # mimic-ext arguments, run inside the case folder
    exit: tuple[int, ...]  # allowed exit codes (one, unless the issue leaves it open)
    pattern: str | None  # regex the one error line must match (exit 2), or some output line
    build: Callable[[Path], None]  # makes the inputs in the case folder
    run: str = INPROC
    writes: tuple[str, ...] = ()  # files the case may create or change (others byte-identical)
    check: str | None = None  # name of an extra check in tests/test_cli_corpus.py
    search_stdout: bool = False  # the pattern may match stdout too (a failed follower, not an error)
    env: tuple[tuple[str, str], ...] = ()  # environment variables set for the run (NAME, value)
    needs: tuple[str, ...] = ()  # optional peer modules the case needs (skipped cleanly without them)


# ---------------------------------------------------------------- input makers


def copy_sample(name: str, as_name: str | None = None, edit: Callable[[str], str] | None = None):
    """A data/ sample copied (and optionally edited as text) into the case folder."""

    def build(d: Path) -> None:
        text = (DATA / name).read_text()
        if edit is not None:
            new = edit(text)
            assert new != text, f"the edit of {name} for this case changed nothing"
            text = new
        out = d / (as_name or Path(name).name)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)

    return build


def replace(old: str, new: str, count: int = 1) -> Callable[[str], str]:
    return lambda text: text.replace(old, new, count)


def both(*builders: Callable[[Path], None]) -> Callable[[Path], None]:
    def build(d: Path) -> None:
        for b in builders:
            b(d)

    return build


def fifo(name: str):
    return lambda d: os.mkfifo(d / name)


def symlink(name: str, target: str):
    return lambda d: os.symlink(target, d / name)


def text_file(name: str, text: str | bytes):
    def build(d: Path) -> None:
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text) if isinstance(text, bytes) else p.write_text(text, encoding="utf-8")

    return build


def stage_composing(arc: str, target: str):
    """A root.usda whose only content comes through one arc (sublayer, reference, payload)."""
    if arc == "sublayer":
        text = f"#usda 1.0\n(\n    subLayers = [@./{target}@]\n)\n"
    else:
        kind = "references" if arc == "reference" else "payload"
        text = f'#usda 1.0\n\ndef Xform "X" (\n    {kind} = @./{target}@\n)\n{{\n}}\n'
    return text_file("root.usda", text)


def sublayered_geared(d: Path) -> None:
    """root.usda with the geared pair as its sublayer (so the sample is an input, not the root)."""
    copy_sample("geared_pair.usda", "g.usda")(d)
    (d / "root.usda").write_text("#usda 1.0\n(\n    subLayers = [@./g.usda@]\n)\n")


def _urdf_link(name: str, mass: float, inertia: float) -> str:
    diagonal = f'ixx="{inertia}" iyy="{inertia}" izz="{inertia}" ixy="0" ixz="0" iyz="0"'
    return f'  <link name="{name}"><inertial><mass value="{mass}"/><inertia {diagonal}/></inertial></link>\n'


URDF = (
    """<?xml version="1.0"{decl}?>
<robot name="r">
"""
    + _urdf_link("base", 1, 1e-3)
    + _urdf_link("a", 0.1, 1e-4)
    + _urdf_link("b", 0.1, 1e-4)
    + """  <joint name="ja" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="jb" type="revolute"><parent link="base"/><child link="b"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/>
    <mimic joint="ja" multiplier="{multiplier}" offset="0"/>{extra}</joint>
</robot>
"""
)


def urdf(name: str = "r.urdf", multiplier: str = "2", extra: str = "", decl: str = ""):
    return text_file(name, URDF.format(multiplier=multiplier, extra=extra, decl=decl))


MJCF = """<mujoco model="m">{include}
  <worldbody>
    <body name="b1">
      <joint name="j1" type="hinge" axis="0 0 1" range="-1 1"/>
      <geom type="box" size=".05 .05 .05" mass="{mass}"/>
      <body name="b2" pos="0.1 0 0">
        <joint name="j2" type="hinge" axis="0 0 1" range="-1 1"/>
        <geom type="box" size=".05 .05 .05" mass="{mass}"/>
      </body>
    </body>
  </worldbody>
  <equality><joint joint1="j2" joint2="j1" polycoef="0 1 0 0 0"/></equality>
  <actuator><position joint="j1" {gains}/></actuator>
</mujoco>
"""


def mjcf(name: str = "m.xml", gains: str = 'kp="10"', mass: str = "1", include: str = ""):
    return text_file(name, MJCF.format(gains=gains, mass=mass, include=include))


def deep_mjcf(depth: int):
    def build(d: Path) -> None:
        opening = "".join(
            f'<body name="b{i}"><joint name="j{i}" type="hinge"/><geom size=".01" mass="0.01"/>' for i in range(depth)
        )
        (d / "deep.xml").write_text(
            f'<mujoco model="deep"><worldbody>{opening}{"</body>" * depth}</worldbody></mujoco>\n'
        )

    return build


CONFIG_NOT_UTF8 = b"sweep_seconds: 2\n# caf\xe9 in Latin-1\n"

G = ("g.usda",)
FOLLOWER, LEADER = "/Gears/Joints/gear_follower", "/Gears/Joints/gear_leader"
SET_G = ("set", "g.usda", FOLLOWER, "--leader", LEADER)
geared = copy_sample("geared_pair.usda", "g.usda")
gripper = copy_sample("gripper_prismatic.usda", "p.usda")
nonfinite = copy_sample("invalid/MIMIC_NONFINITE.usda", "nan.usda")


def geared_edit(old: str, new: str, count: int = 1):
    return copy_sample("geared_pair.usda", "g.usda", replace(old, new, count))


#: gear1 with infinite mass and inertia (finite everywhere else)
infinite_gear1 = copy_sample(
    "geared_pair.usda",
    "g.usda",
    lambda t: t.replace(
        "float3 physics:diagonalInertia = (0.00017333333, 0.00017333333, 0.00033333333)\n        float physics:mass = 0.2",
        "float3 physics:diagonalInertia = (inf, inf, inf)\n        float physics:mass = inf",
    ),
)


def geared_both_text(t: str) -> str:
    """The geared pair's text with the follower's relation in both schemas (two constraints in PhysX)."""
    return t.replace(
        'prepend apiSchemas = ["PhysxMimicJointAPI:rotX"]',
        'prepend apiSchemas = ["PhysxMimicJointAPI:rotX", "NewtonMimicAPI"]',
    ).replace(
        "            float physxMimicJoint:rotX:dampingRatio = 0\n",
        "            float newton:mimicCoef0 = 5.729578\n            float newton:mimicCoef1 = 2\n"
        "            bool newton:mimicEnabled = 1\n            rel newton:mimicJoint = </Gears/Joints/gear_leader>\n"
        "            float physxMimicJoint:rotX:dampingRatio = 0\n",
    )


geared_both = copy_sample("geared_pair.usda", "g.usda", geared_both_text)


# ---------------------------------------------------------------- the cases

NOTHING_LOST = "Nothing lost"
NO_HANG = "No hang, bounded memory"
NO_TRACEBACK = "No traceback, one clear line on stderr"
REFUSED = "Bad input refused, not written"
FIRST_HOUR = "First hour of a new user"


def _cases() -> list[Case]:
    c: list[Case] = []

    def add(name, section, owner, argv, exit, pattern, build, **kw):
        c.append(
            Case(name, section, owner, tuple(argv), exit if isinstance(exit, tuple) else (exit,), pattern, build, **kw)
        )

    # -- nothing lost: an output that is an input is refused, before any work
    add(
        "export_output_is_input",
        NOTHING_LOST,
        "harden",
        ["export", "g.usda", "-o", "g.usda"],
        2,
        r"g\.usda: the URDF must be a \.urdf file",
        geared,
    )
    add(
        "export_output_links_to_input",
        NOTHING_LOST,
        "harden",
        ["export", "g.usda", "-o", "link.urdf"],
        2,
        r"link\.urdf: is an input",
        both(geared, symlink("link.urdf", "g.usda")),
    )
    add(
        "export_output_is_sublayer",
        NOTHING_LOST,
        "harden",
        ["export", "root.usda", "-o", "link.urdf"],
        2,
        r"link\.urdf: is an input",
        both(sublayered_geared, symlink("link.urdf", "g.usda")),
    )
    add(
        "import_output_links_to_input",
        NOTHING_LOST,
        "harden",
        ["import", "r.urdf", "-o", "link.usda"],
        2,
        r"link\.usda: is an input",
        both(urdf(), symlink("link.usda", "r.urdf")),
    )
    add(
        "set_output_is_sublayer",
        NOTHING_LOST,
        "harden",
        ["set", "root.usda", FOLLOWER, "--leader", LEADER, "--multiplier", "3", "-o", "g.usda"],
        2,
        r"g\.usda: is an input",
        sublayered_geared,
    )
    add(
        "set_output_hard_link_to_sublayer",
        NOTHING_LOST,
        "harden",
        ["set", "root.usda", FOLLOWER, "--leader", LEADER, "--multiplier", "3", "-o", "hard.usda"],
        2,
        r"hard\.usda: is an input",
        both(sublayered_geared, lambda d: os.link(d / "g.usda", d / "hard.usda")),
    )
    add(
        "remove_output_is_sublayer",
        NOTHING_LOST,
        "harden",
        ["remove", "root.usda", FOLLOWER, "-o", "g.usda"],
        2,
        r"g\.usda: is an input",
        sublayered_geared,
    )
    add(
        "set_output_is_a_device",
        NOTHING_LOST,
        "harden",
        [*SET_G, "--multiplier", "3", "-o", "dev.usda"],
        2,
        r"dev\.usda: exists and is not a regular file",
        both(geared, symlink("dev.usda", "/dev/null")),
    )
    add("sweep_json_is_input", NOTHING_LOST, "fet022", ["sweep", "g.usda", "--json", "g.usda"], 2, r"g\.usda", geared)
    add(
        "sweep_html_links_to_input",
        NOTHING_LOST,
        "fet022",
        ["sweep", "g.usda", "--html", "r.html"],
        2,
        r"r\.html",
        both(geared, symlink("r.html", "g.usda")),
    )
    add("sweep_junit_is_input", NOTHING_LOST, "fet022", ["sweep", "g.usda", "--junit", "g.usda"], 2, r"g\.usda", geared)
    # issue 27: an output that is a symlink is refused naming both paths (writing through it would
    # change a file the user did not name; replacing it would destroy their link); in place through
    # a link (the case below) the user named the link as the stage to edit
    add(
        "set_output_symlink_to_other_file",
        NOTHING_LOST,
        "harden",
        [*SET_G, "--multiplier", "3", "-o", "link.usda"],
        2,
        r"link\.usda: is a symbolic link to other\.usda; refusing to write through it .*give other\.usda itself",
        both(geared, copy_sample("geared_pair.usda", "other.usda"), symlink("link.usda", "other.usda")),
    )
    add(
        "set_output_dangling_symlink",
        NOTHING_LOST,
        "harden",
        [*SET_G, "--multiplier", "3", "-o", "link.usda"],
        2,
        r"link\.usda: is a symbolic link to missing\.usda",
        both(geared, symlink("link.usda", "missing.usda")),
    )
    add(
        "import_output_symlink",
        NOTHING_LOST,
        "harden",
        ["import", "r.urdf", "-o", "link.usda"],
        2,
        r"link\.usda: is a symbolic link to other\.usda",
        both(urdf(), copy_sample("geared_pair.usda", "other.usda"), symlink("link.usda", "other.usda")),
    )
    add(
        "export_output_symlink",
        NOTHING_LOST,
        "harden",
        ["export", "g.usda", "-o", "link.urdf"],
        2,
        r"link\.urdf: is a symbolic link to other\.urdf",
        both(geared, urdf("other.urdf"), symlink("link.urdf", "other.urdf")),
    )
    add(
        "sweep_json_symlink",
        NOTHING_LOST,
        "harden",
        ["sweep", "g.usda", "--json", "link.json"],
        2,
        r"link\.json: is a symbolic link to old\.json",
        both(geared, text_file("old.json", "{}\n"), symlink("link.json", "old.json")),
    )
    add(
        "sweep_report_folder_symlink",
        NOTHING_LOST,
        "harden",
        ["sweep", "g.usda", "--report", "rep"],
        2,
        r"fet022_report\.json: is a symbolic link to old\.json",
        both(
            geared,
            text_file("old.json", "{}\n"),
            lambda d: (d / "rep").mkdir(),
            symlink("rep/fet022_report.json", "../old.json"),
        ),
    )
    add(
        "set_through_symlink_edits_target",
        NOTHING_LOST,
        "harden",
        ["set", "link.usda", FOLLOWER, "--leader", LEADER, "--multiplier", "3"],
        0,
        None,
        both(geared, symlink("link.usda", "g.usda")),
        writes=G,
        check="symlink_kept_target_edited",
    )

    add(
        "set_newton_beside_physx_explains",
        REFUSED,
        "harden",
        [*SET_G, "--multiplier", "2", "--schema", "newton"],
        2,
        r"gear_follower already follows /Gears/Joints/gear_leader through PhysxMimicJointAPI:rotX.*second "
        r"constraint.*mimic-ext convert STAGE --to newton --follower /Gears/Joints/gear_follower.*nothing written",
        geared,
    )
    add(
        "set_one_of_two_schemas_explains",
        REFUSED,
        "harden",
        [*SET_G, "--multiplier", "3"],
        2,
        r"gear_follower carries both PhysxMimicJointAPI and NewtonMimicAPI.*would leave two constraints that "
        r"disagree.*--duplicates-only",
        geared_both,
    )
    add(
        "convert_keeps_one_of_two_schemas",
        FIRST_HOUR,
        "harden",
        ["convert", "g.usda", "--to", "newton", "--duplicates-only"],
        0,
        None,
        geared_both,
        writes=G,
        check="newton_alone_says_2",
    )

    # -- no hang, bounded memory: FIFOs and devices anywhere are refused before anything reads them
    add(
        "list_fifo_stage",
        NO_HANG,
        "harden",
        ["list", "f.usda"],
        2,
        r"f\.usda: is a FIFO",
        fifo("f.usda"),
        run=SUBPROCESS,
    )
    add(
        "validate_fifo_sublayer",
        NO_HANG,
        "harden",
        ["validate", "root.usda"],
        2,
        r"root\.usda: composes .*s\.usda: is a FIFO",
        both(stage_composing("sublayer", "s.usda"), fifo("s.usda")),
        run=SUBPROCESS,
    )
    add(
        "list_fifo_reference",
        NO_HANG,
        "harden",
        ["list", "root.usda"],
        2,
        r"composes .*r\.usda: is a FIFO",
        both(stage_composing("reference", "r.usda"), fifo("r.usda")),
        run=SUBPROCESS,
    )
    add(
        "list_fifo_payload",
        NO_HANG,
        "harden",
        ["list", "root.usda"],
        2,
        r"composes .*p\.usdc: is a FIFO",
        both(stage_composing("payload", "p.usdc"), fifo("p.usdc")),
        run=SUBPROCESS,
    )
    add(
        "set_fifo_stage",
        NO_HANG,
        "harden",
        ["set", "f.usda", "/A", "--leader", "/B", "--multiplier", "1"],
        2,
        r"f\.usda: is a FIFO",
        fifo("f.usda"),
        run=SUBPROCESS,
    )
    add(
        "sweep_fifo_stage",
        NO_HANG,
        "fet022",
        ["sweep", "f.usda"],
        2,
        r"f\.usda: is a FIFO",
        fifo("f.usda"),
        run=SUBPROCESS,
    )
    add(
        "list_dev_zero_stage",
        NO_HANG,
        "harden",
        ["list", "z.usda"],
        2,
        r"z\.usda: is a character device",
        symlink("z.usda", "/dev/zero"),
        run=SUBPROCESS,
    )
    add(
        "list_dev_zero_sublayer",
        NO_HANG,
        "harden",
        ["list", "root.usda"],
        2,
        r"composes .*is a character device",
        both(stage_composing("sublayer", "z.usda"), symlink("z.usda", "/dev/zero")),
        run=SUBPROCESS,
    )
    add(
        "sweep_fifo_config",
        NO_HANG,
        "harden",
        ["sweep", "g.usda", "--config", "c.yaml"],
        2,
        r"c\.yaml: is a FIFO",
        both(geared, fifo("c.yaml")),
        run=SUBPROCESS,
    )
    add(
        "sweep_dev_zero_config",
        NO_HANG,
        "harden",
        ["sweep", "g.usda", "--config", "c.yaml"],
        2,
        r"c\.yaml: is a character device",
        both(geared, symlink("c.yaml", "/dev/zero")),
        run=SUBPROCESS,
    )
    add(
        "import_fifo_urdf",
        NO_HANG,
        "importers",
        ["import", "f.urdf", "-o", "out.usda"],
        2,
        r"f\.urdf: .*FIFO",
        fifo("f.urdf"),
        run=SUBPROCESS,
    )
    add(
        "import_fifo_mjcf",
        NO_HANG,
        "importers",
        ["import", "f.xml", "-o", "out.usda"],
        2,
        r"f\.xml: .*FIFO",
        fifo("f.xml"),
        run=SUBPROCESS,
    )
    add(
        "import_fifo_mjcf_include",
        NO_HANG,
        "importers",
        ["import", "m.xml", "-o", "out.usda"],
        2,
        r"inc\.xml.*FIFO",
        both(mjcf(include='\n  <include file="inc.xml"/>'), fifo("inc.xml")),
        run=SUBPROCESS,
    )
    add(
        "import_dev_zero_urdf",
        NO_HANG,
        "importers",
        ["import", "z.urdf", "-o", "out.usda"],
        2,
        r"z\.urdf: .*character device",
        symlink("z.urdf", "/dev/zero"),
        run=SUBPROCESS,
    )
    add(
        "sweep_seconds_unbounded",
        NO_HANG,
        "fet022",
        ["sweep", "g.usda", "--sweep-seconds", "1e6"],
        2,
        r"sweep.seconds",
        geared,
        run=SUBPROCESS,
    )
    add(
        "settle_seconds_unbounded",
        NO_HANG,
        "fet022",
        ["sweep", "g.usda", "--settle-seconds", "1e7"],
        2,
        r"settle.seconds",
        geared,
        run=SUBPROCESS,
    )
    add(
        "physics_fps_unbounded",
        NO_HANG,
        "fet022",
        ["sweep", "g.usda", "--physics-fps", "1e7"],
        2,
        r"physics.fps",
        geared,
        run=SUBPROCESS,
    )
    add(
        "mjcf_nesting_too_deep",
        NO_HANG,
        "importers",
        ["import", "deep.xml", "-o", "out.usda"],
        2,
        r"deep\.xml.*(?i:deep|depth|nest)",
        deep_mjcf(3000),
        run=SUBPROCESS,
    )

    # -- no traceback, one clear line
    add(
        "sweep_json_nan_gearing",
        NO_TRACEBACK,
        "fet022",
        ["sweep", "nan.usda", "--json", "out.json"],
        1,
        r"(?i)nan|finite",
        nonfinite,
        writes=("out.json",),
        check="json_written",
        search_stdout=True,
    )
    add(
        "mjcf_dampratio_massless",
        NO_TRACEBACK,
        "importers",
        ["import", "m.xml", "-o", "out.usda"],
        2,
        r"(?i)dampratio",
        mjcf(gains='kp="10" dampratio="1"', mass="0"),
    )
    add(
        "mjcf_negative_kp",
        NO_TRACEBACK,
        "importers",
        ["import", "m.xml", "-o", "out.usda"],
        2,
        r"kp",
        mjcf(gains='kp="-5" dampratio="1"'),
    )
    add(
        "urdf_unknown_encoding",
        NO_TRACEBACK,
        "importers",
        ["import", "r.urdf", "-o", "out.usda"],
        2,
        r"(?i)encoding",
        urdf(decl=' encoding="x-no-such-encoding"'),
    )
    # a mistyped attribute reads as an invalid relation: listed, and reported by validate
    gearing_string = geared_edit(
        "float physxMimicJoint:rotX:gearing = -2", 'string physxMimicJoint:rotX:gearing = "-2"'
    )
    add("list_gearing_is_a_string", NO_TRACEBACK, "hosts", ["list", "g.usda"], 0, None, gearing_string)
    add(
        "validate_gearing_is_a_string",
        NO_TRACEBACK,
        "hosts",
        ["validate", "g.usda"],
        1,
        r"gearing.*(?i:string|type)",
        gearing_string,
        search_stdout=True,
    )
    add(
        "set_instance_with_space",
        NO_TRACEBACK,
        "harden",
        [*SET_G, "--multiplier", "2", "--instance", "bad name"],
        2,
        r"--instance: invalid choice: 'bad name'",
        geared,
    )
    add(
        "sweep_config_not_utf8",
        NO_TRACEBACK,
        "harden",
        ["sweep", "g.usda", "--config", "c.yaml"],
        2,
        r"c\.yaml:2: not UTF-8",
        both(geared, text_file("c.yaml", CONFIG_NOT_UTF8)),
    )
    add(
        "sweep_device_missing",
        NO_TRACEBACK,
        "harden",
        ["sweep", "g.usda", "--device", "cuda:99"],
        2,
        r"--device cuda:99: no such Warp device",
        geared,
    )
    add(
        "list_meters_per_unit_zero",
        NO_TRACEBACK,
        "hosts",
        ["list", "p.usda"],
        2,
        r"metersPerUnit",
        copy_sample("gripper_prismatic.usda", "p.usda", replace("metersPerUnit = 1", "metersPerUnit = 0")),
    )
    add(
        "sweep_missing_stage_on_stderr",
        NO_TRACEBACK,
        "fet022",
        ["sweep", "nope.usda"],
        2,
        r"nope\.usda: no such file",
        lambda d: None,
    )
    add(
        "argparse_missing_required",
        NO_TRACEBACK,
        "harden",
        ["set", "g.usda", FOLLOWER, "--multiplier", "2"],
        2,
        r"^mimic-ext: error: set: the following arguments are required: --leader \(see: mimic-ext set --help\)$",
        geared,
    )
    add("argparse_unknown_command", NO_TRACEBACK, "harden", ["lsit", "g.usda"], 2, r"invalid choice: 'lsit'", geared)

    # -- bad input refused, not written
    add(
        "set_follower_not_joint",
        REFUSED,
        "harden",
        ["set", "g.usda", "/Gears/gear2", "--leader", LEADER, "--multiplier", "2"],
        2,
        r"MIMIC_FOLLOWER_NOT_JOINT",
        geared,
    )
    add(
        "set_leader_not_joint",
        REFUSED,
        "harden",
        [*SET_G[:3], "--leader", "/Gears/gear1", "--multiplier", "2"],
        2,
        r"MIMIC_REFERENCE_NOT_JOINT",
        geared,
    )
    add(
        "set_fixed_follower",
        REFUSED,
        "harden",
        [
            "set",
            "p.usda",
            "/Gripper/Joints/base_joint",
            "--leader",
            "/Gripper/Joints/finger1_joint",
            "--multiplier",
            "1",
        ],
        2,
        r"MIMIC_FOLLOWER_TYPE",
        gripper,
    )
    add(
        "set_self_reference",
        REFUSED,
        "harden",
        [*SET_G[:3], "--leader", FOLLOWER, "--multiplier", "2"],
        2,
        r"MIMIC_SELF_REFERENCE",
        geared,
    )
    add(
        "set_instance_with_colon",
        REFUSED,
        "harden",
        [*SET_G, "--multiplier", "2", "--instance", "a:b"],
        2,
        r"--instance: invalid choice: 'a:b'",
        geared,
    )
    add(
        "set_float32_overflow",
        REFUSED,
        "harden",
        [*SET_G, "--multiplier", "1e39"],
        2,
        r"--multiplier: 1e39 does not fit the 32-bit float",
        geared,
    )
    add(
        "set_float32_underflow",
        REFUSED,
        "harden",
        [*SET_G, "--multiplier", "2", "--offset", "1e-50"],
        2,
        r"--offset: 1e-50 is below the smallest 32-bit float",
        geared,
    )
    add(
        "set_float32_overflow_after_units",
        REFUSED,
        "hosts",
        ["set", "mixed.usda", FOLLOWER, "--leader", LEADER, "--multiplier", "1e38"],
        2,
        r"(?i)32-bit|float32|overflow",
        copy_sample(
            "geared_pair.usda",
            "mixed.usda",
            lambda t: t.replace(
                'def PhysicsRevoluteJoint "gear_leader"', 'def PhysicsPrismaticJoint "gear_leader"'
            ).replace("drive:angular", "drive:linear"),
        ),
    )
    add(
        "set_arabic_indic_digit",
        REFUSED,
        "harden",
        [*SET_G, "--multiplier", "\u0661"],
        2,
        r"--multiplier: '\u0661' is not a number",
        geared,
    )
    add("set_unicode_minus", REFUSED, "harden", [*SET_G, "--multiplier", "\u22122"], 2, r"is not a number", geared)
    add("set_nan", REFUSED, "harden", [*SET_G, "--multiplier", "nan"], 2, r"--multiplier: must be a finite", geared)
    add(
        "set_output_not_usd",
        REFUSED,
        "harden",
        [*SET_G, "--multiplier", "3", "-o", "out.txt"],
        2,
        r"out\.txt: the edited stage must be a \.usda",
        geared,
    )
    add(
        "export_output_not_urdf",
        REFUSED,
        "harden",
        ["export", "g.usda", "-o", "out.usda"],
        2,
        r"out\.usda: the URDF must be a \.urdf file",
        geared,
    )
    add("import_output_not_usd", REFUSED, "harden", ["import", "r.urdf", "-o", "out.txt"], 2, r"out\.txt", urdf())
    add(
        "import_float32_overflow",
        REFUSED,
        "importers",
        ["import", "r.urdf", "-o", "out.usda"],
        2,
        r"r\.urdf:\d+.*(?i:32-bit|float32|overflow|too large)",
        urdf(multiplier="1e39"),
    )
    add(
        "import_float32_underflow",
        REFUSED,
        "importers",
        ["import", "r.urdf", "-o", "out.usda"],
        2,
        r"r\.urdf:\d+.*(?i:32-bit|float32|underflow|too small)",
        urdf(multiplier="1e-50"),
    )
    add(
        "export_nonfinite_gearing",
        REFUSED,
        "importers",
        ["export", "nan.usda", "-o", "out.urdf"],
        2,
        r"(?i)nan|finite",
        nonfinite,
    )
    add(
        "export_nonfinite_mass",
        REFUSED,
        "importers",
        ["export", "g.usda", "-o", "out.urdf"],
        2,
        r"(?i)inf|finite",
        geared_edit("float physics:mass = 0.2", "float physics:mass = inf"),
    )
    add(
        "urdf_second_mimic",
        REFUSED,
        "importers",
        ["import", "r.urdf", "-o", "out.usda"],
        2,
        r"r\.urdf:\d+.*mimic",
        urdf(extra='\n    <mimic joint="ja" multiplier="3" offset="0"/>'),
    )
    add(
        "urdf_arabic_indic_digit",
        REFUSED,
        "importers",
        ["import", "r.urdf", "-o", "out.usda"],
        2,
        r"r\.urdf:\d+",
        urdf(multiplier="\u0661"),
    )
    add(
        "sweep_nan_inertia",
        REFUSED,
        "solver",
        ["sweep", "g.usda"],
        (1, 2),
        r"(?i)nan|finite",
        geared_edit(
            "float3 physics:diagonalInertia = (0.00017333333, 0.00017333333, 0.00033333333)",
            "float3 physics:diagonalInertia = (nan, nan, nan)",
        ),
        search_stdout=True,
    )
    add(
        "sweep_nan_drive_stiffness",
        REFUSED,
        "solver",
        ["sweep", "g.usda"],
        (1, 2),
        r"(?i)nan|finite",
        geared_edit(
            "float drive:angular:physics:stiffness = 0.08726646", "float drive:angular:physics:stiffness = nan"
        ),
        search_stdout=True,
    )
    add(
        "sweep_nan_body_position",
        REFUSED,
        "solver",
        ["sweep", "g.usda"],
        (1, 2),
        r"(?i)nan|finite",
        geared_edit("double3 xformOp:translate = (-0.075, 0, 0.06)", "double3 xformOp:translate = (nan, 0, 0.06)"),
        search_stdout=True,
    )
    add(
        "sweep_reversed_leader_limits",
        REFUSED,
        "fet022",
        ["sweep", "g.usda"],
        (1, 2),
        r"(?i)limit",
        geared_edit(
            "float physics:lowerLimit = -60\n            float physics:upperLimit = 60",
            "float physics:lowerLimit = 60\n            float physics:upperLimit = -60",
        ),
        search_stdout=True,
    )
    add(
        "sweep_joint_without_bodies",
        REFUSED,
        "solver",
        ["sweep", "g.usda"],
        (1, 2),
        r"(?i)bod(y|ies)",
        geared_edit(
            "            rel physics:body0 = </Gears/base>\n            rel physics:body1 = </Gears/gear2>\n", ""
        ),
        search_stdout=True,
    )

    # issue 27: values that are finite but meaningless, and stages the tools must not guess about
    add(
        "validate_gearing_1e30",
        REFUSED,
        "harden",
        ["validate", "g.usda"],
        1,
        r"^ERROR +MIMIC_EXTREME_GEARING +/Gears/Joints/gear_follower: ",
        geared_edit("gearing = -2", "gearing = -1e30"),
        search_stdout=True,
    )
    add(
        "validate_infinite_body_mass",
        REFUSED,
        "harden",
        ["validate", "g.usda"],
        1,
        r"^ERROR +MIMIC_BODY_MASS_NONFINITE +/Gears/gear1: physics:mass = inf, physics:diagonalInertia",
        infinite_gear1,
        search_stdout=True,
    )
    add(
        "export_no_default_prim_several_articulations",
        REFUSED,
        "harden",
        ["export", "g.usda", "-o", "out.urdf"],
        2,
        r"2 articulations \(/Gears, /Other\) and the stage has no default prim: choose one with --robot PRIM",
        copy_sample(
            "geared_pair.usda",
            "g.usda",
            lambda t: (
                t.replace('    defaultPrim = "Gears"\n', "")
                + 'def Xform "Other" (\n    prepend apiSchemas = ["PhysicsArticulationRootAPI"]\n)\n{\n}\n'
            ),
        ),
    )
    add(
        "export_no_default_prim_names_the_one",
        FIRST_HOUR,
        "harden",
        ["export", "g.usda", "-o", "out.urdf"],
        0,
        r"^mimic-ext: warning: the stage has no default prim; exporting the stage's only articulation, /Gears$",
        copy_sample("geared_pair.usda", "g.usda", replace('    defaultPrim = "Gears"\n', "")),
        writes=("out.urdf",),
    )
    add(
        "sweep_all_masses_zero_not_judged",
        REFUSED,
        "harden",
        ["sweep", "g.usda"],
        2,
        r"cannot judge g\.usda: every rigid body has mass 0 \(/Gears/base, /Gears/gear1, /Gears/gear2\)",
        copy_sample(
            "geared_pair.usda", "g.usda", lambda t: re.sub(r"float physics:mass = [0-9.]+", "float physics:mass = 0", t)
        ),
    )

    # -- first hour
    for command in ("list", "validate", "sweep"):
        add(f"{command}_urdf_directly", FIRST_HOUR, "harden", [command, "r.urdf"], 0, None, urdf())
    add("list_mjcf_directly", FIRST_HOUR, "harden", ["list", "m.xml"], 0, None, mjcf())
    add(
        "set_urdf_says_import_first",
        FIRST_HOUR,
        "harden",
        ["set", "r.urdf", "/r/Joints/jb", "--leader", "/r/Joints/ja", "--multiplier", "2"],
        2,
        r"run 'mimic-ext import r\.urdf -o r\.usda' first",
        urdf(),
    )
    add(
        "list_json_dash",
        FIRST_HOUR,
        "harden",
        ["list", "g.usda", "--json", "-"],
        0,
        None,
        geared,
        check="stdout_is_json",
    )
    add(
        "validate_json_dash",
        FIRST_HOUR,
        "harden",
        ["validate", "--json=-", "g.usda"],
        0,
        None,
        geared,
        check="stdout_is_json",
    )
    add(
        "sweep_json_dash",
        FIRST_HOUR,
        "fet022",
        ["sweep", "g.usda", "--json", "-"],
        0,
        None,
        geared,
        check="stdout_has_json",
    )
    add(
        "sweep_bad_instance_name_fails",
        FIRST_HOUR,
        "fet022",
        # --strict: our port's instance-name check fails it; NVIDIA's phase (the default verdict
        # where the simready extra is installed) passes it (docs/fet022.md, difference 13)
        ["sweep", "i.usda", "--strict"],
        1,
        r"(?i)instance",
        copy_sample("invalid/MIMIC_INSTANCE_NAME.usda", "i.usda"),
        search_stdout=True,
    )
    add(
        "set_prints_what_changed",
        FIRST_HOUR,
        "harden",
        [*SET_G, "--multiplier", "3", "--offset", "0.1"],
        0,
        None,
        geared,
        writes=G,
        check="set_printed_before_after",
    )
    _issue43_cases(add)
    return c


#: a file name that is not UTF-8 (as Python sees it: lone surrogates, PEP 383)
NOT_UTF8_NAME = os.fsdecode(b"\xff\xfe.usda")
CONFIG_ENV = "MIMIC_EXT_FET022_CONFIG"
#: a peer package shadowing the real one from the case folder (``python -m`` puts the working
#: folder first on sys.path); no bytecode, so nothing new appears beside it
NO_BYTECODE = (("PYTHONDONTWRITEBYTECODE", "1"),)


def broken_package(name: str, raise_line: str):
    return text_file(f"{name}/__init__.py", f"{raise_line}\n")


def _issue43_cases(add) -> None:
    """Issue 43: an input overwritten by a report, the last tracebacks, causes shown."""
    # -- every file the run reads is an input, the config the variable names included
    add(
        "sweep_json_is_env_config",
        NOTHING_LOST,
        "harden",
        ["sweep", "g.usda", "--json", "c.yaml"],
        2,
        r"c\.yaml: is an input",
        both(geared, text_file("c.yaml", "sweep_seconds: 2\n")),
        env=((CONFIG_ENV, "c.yaml"),),
    )
    add(
        "sweep_report_onto_env_config_folder",
        NOTHING_LOST,
        "harden",
        ["sweep", "g.usda", "--report", "rep"],
        2,
        r"rep/fet022_junit\.xml: is an input",
        both(geared, text_file("rep/fet022_junit.xml", "sweep_seconds: 2\n")),
        env=((CONFIG_ENV, "rep/fet022_junit.xml"),),
    )
    add(
        "sweep_second_output_unwritable_writes_none",
        NOTHING_LOST,
        "harden",
        ["sweep", "g.usda", "--json", "ok.json", "--html", "ro/r.html"],
        2,
        r"ro/r\.html: ",
        both(geared, text_file("ro", "a file where the report's folder would be\n")),
    )
    # /proc takes no new file, even from root (a read-only folder does, for root): the failure
    # comes at the write, after the sweep, when the JSON's temporary is already complete
    add(
        "sweep_last_output_fails_at_write_writes_none",
        NOTHING_LOST,
        "harden",
        ["sweep", "g.usda", "--json", "ok.json", "--html", "/proc/r.html"],
        2,
        r"/proc/r\.html: cannot write",
        geared,
    )
    # -- tracebacks
    for name, text, env in (
        ("sweep_config_sample_every_inf", "sample_every: .inf\n", False),
        ("sweep_config_sample_every_minus_inf", "sample_every: -.inf\n", False),
        ("sweep_env_config_capture_fps_inf", "capture_fps: .inf\n", True),
    ):
        add(
            name,
            NO_TRACEBACK,
            "harden",
            ["sweep", "g.usda"] + ([] if env else ["--config", "c.yaml"]),
            2,
            r"c\.yaml.*(sample_every|capture_fps) = -?inf: expected int",
            both(geared, text_file("c.yaml", text)),
            env=((CONFIG_ENV, "c.yaml"),) if env else (),
        )
    for command, extra in (
        ("list", []),
        ("validate", []),
        ("set", [FOLLOWER, "--leader", LEADER, "--multiplier", "3"]),
        ("sweep", ["--json", "out.json"]),
    ):
        add(
            f"{command}_name_not_utf8",
            NO_TRACEBACK,
            "harden",
            [command, NOT_UTF8_NAME, *extra],
            2,
            r"^mimic-ext: error: \\xff\\xfe\.usda: the name is not UTF-8",
            copy_sample("geared_pair.usda", NOT_UTF8_NAME),
        )
    add(
        "sweep_folder_holding_name_not_utf8",
        NO_TRACEBACK,
        "harden",
        ["sweep", "f", "--json", "out.json"],
        2,
        r"f/\\xff\\xfe\.usda: the name is not UTF-8",
        copy_sample("geared_pair.usda", f"f/{NOT_UTF8_NAME}"),
    )
    add(
        "list_newline_in_name_one_line",
        NO_TRACEBACK,
        "harden",
        ["list", "a\nb.usda"],
        2,
        r"a\\nb\.usda: no such file",
        lambda d: None,
    )
    # -- a relation the validator calls an error is not written again, whatever the stage held
    fixed_leader = "</Gears/Joints/base_joint>"
    add(
        "set_again_on_fixed_leader_refused",
        REFUSED,
        "harden",
        ["set", "g.usda", FOLLOWER, "--leader", "/Gears/Joints/base_joint", "--multiplier", "3"],
        2,
        r"MIMIC_REFERENCE_TYPE.*held this error before.*nothing written",
        geared_edit("referenceJoint = </Gears/Joints/gear_leader>", f"referenceJoint = {fixed_leader}"),
    )
    add(
        "set_again_extreme_gearing_refused",
        REFUSED,
        "harden",
        [*SET_G, "--multiplier", "2e30"],
        2,
        r"MIMIC_EXTREME_GEARING.*nothing written",
        geared_edit("gearing = -2", "gearing = -1e30"),
    )
    add(
        "convert_extreme_gearing_refused",
        REFUSED,
        "harden",
        ["convert", "g.usda", "--to", "newton"],
        2,
        r"MIMIC_EXTREME_GEARING.*nothing written",
        geared_edit("gearing = -2", "gearing = -1e30"),
    )
    newton_on_fixed_base = copy_sample(
        "geared_pair.usda",
        "g.usda",
        lambda t: geared_both_text(t).replace(
            "rel newton:mimicJoint = </Gears/Joints/gear_leader>", f"rel newton:mimicJoint = {fixed_leader}"
        ),
    )
    add(
        "convert_never_keeps_the_fixed_base_one",
        REFUSED,
        "harden",
        ["convert", "g.usda", "--to", "newton", "--duplicates-only"],
        2,
        r"MIMIC_REFERENCE_TYPE.*nothing written",
        newton_on_fixed_base,
    )
    add(
        "convert_names_a_different_leader",
        FIRST_HOUR,
        "harden",
        ["convert", "g.usda", "--to", "physx", "--duplicates-only"],
        0,
        r"^removed the duplicate .*following /Gears/Joints/base_joint, a different relation\); kept .* following "
        r"/Gears/Joints/gear_leader\)$",
        newton_on_fixed_base,
        writes=G,
        search_stdout=True,
    )
    # -- an in-place edit of a commented .usda says that USD drops the comments (before writing)
    add(
        "set_in_place_warns_of_dropped_comments",
        FIRST_HOUR,
        "harden",
        [*SET_G, "--multiplier", "3"],
        0,
        r"^mimic-ext: warning: g\.usda: holds 2 '#' comment line\(s\), which USD does not keep",
        geared_edit("def PhysicsScene", "# the scene\n    # (indented)\ndef PhysicsScene"),
        writes=G,
    )
    # -- first hour: a missing input is named before USD is imported (seconds on a busy machine):
    # a pxr package in the case folder that refuses to load shows whether anything imported it
    for command, extra in (
        ("list", []),
        ("validate", []),
        ("set", [FOLLOWER, "--leader", LEADER, "--multiplier", "2"]),
        ("export", ["-o", "out.urdf"]),
        ("import", ["-o", "out.usda"]),
    ):
        add(
            f"{command}_missing_input_before_pxr",
            FIRST_HOUR,
            "harden",
            [command, "nope.usda" if command != "import" else "nope.urdf", *extra],
            2,
            r"^mimic-ext: error: nope\.(usda|urdf): no such file$",
            broken_package("pxr", 'raise ImportError("pxr was imported before the input was checked")'),
            run=SUBPROCESS,
            env=NO_BYTECODE,
        )
    # -- first hour: a multi-engine sweep says a shared warning once, naming the engines; the
    # harness's sign rule once per report (the HTML links each follower to that one paragraph)
    narrow_follower = geared_edit("float physics:lowerLimit = -120", "float physics:lowerLimit = -100")
    add(
        "sweep_engines_share_one_warning_line",
        FIRST_HOUR,
        "harden",
        ["sweep", "g.usda", "--engine", "warp,physx", "-q"],
        0,
        r"^  warning \[warp, physx\]: gear_follower: validator MIMIC_RANGE_OUTSIDE_LIMITS",
        narrow_follower,
        search_stdout=True,
        needs=("ovphysx",),
    )
    add(
        "sweep_sign_rule_once_per_report",
        FIRST_HOUR,
        "harden",
        ["sweep", "g.usda", "g2.usda", "--html", "r.html", "-q"],
        0,
        None,
        both(geared, copy_sample("geared_pair.usda", "g2.usda")),
        writes=("r.html",),
        check="sign_rule_once",
    )
    # -- first hour: an engine's note about itself (MuJoCo's solref, its integrator) once for the
    # run, not under every stage (it was ten times on ten stages)
    add(
        "sweep_engine_notes_once_per_run",
        FIRST_HOUR,
        "harden",
        ["sweep", "g.usda", "g2.usda", "--engine", "warp,mujoco", "-q"],
        0,
        None,
        both(geared, copy_sample("geared_pair.usda", "g2.usda")),
        check="engine_notes_once",
        needs=("mujoco",),
    )
    # -- first hour: import shows the validation findings it counts, and says which joints a
    # velocity-limit note is about before explaining why
    add(
        "import_lists_its_validation_warnings",
        FIRST_HOUR,
        "harden",
        ["import", "r.urdf", "-o", "out.usda"],
        0,
        r"^mimic-ext: warning: validation warning MIMIC_RANGE_OUTSIDE_LIMITS /r/Joints/jb: ",
        urdf(multiplier="3"),
        writes=("out.usda",),
    )
    add(
        "import_velocity_note_names_the_joints_first",
        FIRST_HOUR,
        "harden",
        ["import", "r.urdf", "-o", "out.usda"],
        0,
        r"^mimic-ext: warning: r\.urdf: 1 mimic follower\(s\) keep no velocity limit: jb \(as Isaac Sim",
        urdf(),
        writes=("out.usda",),
    )
    add(  # export's --robot names a prim, not a file: not checked as an input file
        "export_robot_prim_is_not_a_file",
        FIRST_HOUR,
        "harden",
        ["export", "g.usda", "-o", "out.urdf", "--robot", "/Gears"],
        0,
        None,
        geared,
        writes=("out.urdf",),
    )
    # -- causes shown
    add(
        "sweep_engine_import_oserror_named",
        NO_TRACEBACK,
        "harden",
        ["sweep", "g.usda", "--engine", "mujoco"],
        2,
        r"mujoco engine: mujoco is installed but its import failed: OSError: libGL\.so\.1: cannot open",
        both(geared, broken_package("mujoco", 'raise OSError("libGL.so.1: cannot open shared object file")')),
        run=SUBPROCESS,
        env=NO_BYTECODE,
    )
    # the peer is looked up before the run and imported where the engine runs (a worker): one
    # line still, for every stage it stopped, naming the package and its real error
    add(
        "sweep_engine_import_oserror_once_for_all_stages",
        NO_TRACEBACK,
        "harden",
        ["sweep", "g.usda", "g2.usda", "--engine", "mujoco", "-q"],
        2,
        r"mujoco engine: mujoco is installed but its import failed: OSError: libGL\.so\.1: .* \(2 stages: g\.usda, "
        r"g2\.usda\)$",
        both(
            geared,
            copy_sample("geared_pair.usda", "g2.usda"),
            broken_package("mujoco", 'raise OSError("libGL.so.1: cannot open shared object file")'),
        ),
        run=SUBPROCESS,
        env=NO_BYTECODE,
    )
    add(
        "sweep_engine_import_error_not_called_missing",
        NO_TRACEBACK,
        "harden",
        ["sweep", "g.usda", "--engine", "mujoco"],
        2,
        r"mujoco is installed but its import failed: ImportError: cannot import name 'x'",
        both(geared, broken_package("mujoco", "raise ImportError(\"cannot import name 'x' from 'mujoco._api'\")")),
        run=SUBPROCESS,
        env=NO_BYTECODE,
    )
    add(
        "sweep_engine_missing_dependency_named",
        NO_TRACEBACK,
        "harden",
        ["sweep", "g.usda", "--engine", "mujoco"],
        2,
        r"mujoco is installed but its import failed: it needs no_such_dependency_43, which is not installed",
        both(geared, broken_package("mujoco", "import no_such_dependency_43")),
        run=SUBPROCESS,
        env=NO_BYTECODE,
    )
    add(
        "sweep_engine_device_missing",
        REFUSED,
        "harden",
        ["sweep", "g.usda", "--engine", "physx:cuda:7", "--json", "out.json"],
        2,
        r"--engine physx:cuda:7: cuda:7: no such device",
        geared,
    )


CASES: list[Case] = _cases()


def build_case(case: Case, root: Path) -> Path:
    """The case's folder under ``root``, with its inputs made."""
    d = root / case.name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    case.build(d)
    return d


def _main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tests/corpus/build_corpus.py OUT_DIR", file=sys.stderr)
        return 2
    root = Path(argv[0])
    for case in CASES:
        build_case(case, root)
        shown = " ".join(a if re.fullmatch(r"[\w./:=-]+", a) else repr(a) for a in case.argv)
        print(
            f"{case.name}: (cd {root / case.name} && mimic-ext {shown})  -> exit {'/'.join(map(str, case.exit))}"
            f"  [{case.owner}]"
        )
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
