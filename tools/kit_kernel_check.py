"""Start NVIDIA's real Kit kernel and show what it makes of this extension (not part of the test suite).

What it checks, with the kernel's own code: the extension is found in an extension folder
(the project folder linked under its extension name), its root ``extension.toml`` is parsed
(and that a ``config/extension.toml`` layout is found too), the parsed ``[python.pipapi]``
(which module Kit would import for each requirement, and whether Kit's Python has it), the
``[dependencies]`` as Kit's solver sees them, and enabling it: Kit applies ``[settings]``,
imports ``[[python.module]] mimic_ext`` from the project folder, then ``mimic_ext.kit``,
which stops at the first module the bare kernel does not have. It also checks, against the
real ``carb`` and ``omni.ext``, the few kernel behaviours the stand-ins copy.

What it cannot check: the kernel has no omni.usd, pxr, omni.ui, omni.kit.commands, Property
window or PhysX, so nothing of the Property section, the commands or the sweep runs here (the
tests run those against the stand-ins in tests/kit_stubs). The non-optional dependencies the
kernel lacks are given as empty placeholder extensions so that the solver and the enable go as
far as Kit's own steps allow; what they would provide is exactly what is missing.

Install the kernel once, outside the project (about 1 GB, Python 3.12):
    python3.12 -m venv ~/kitvenv
    ~/kitvenv/bin/pip install isaacsim-kernel==6.2.0.0 isaacsim-extscache-physics==6.2.0.0
Run:
    python tools/kit_kernel_check.py --kit ~/kitvenv/bin/isaacsim
(or set MIMIC_EXT_KIT). Prints one ``CHECK`` line per finding and exits 1 when one fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
EXT_NAME = "mimic_ext"
TIMEOUT_S = 600

# Runs inside Kit (--exec): reports JSON lines prefixed with "MIMIC_CHECK ".
PROBE = r"""
import importlib, json, sys, traceback
import carb, carb.settings, omni.ext, omni.kit.app

def report(name, ok, detail):
    print("MIMIC_CHECK " + json.dumps({"name": name, "ok": None if ok is None else bool(ok), "detail": detail},
                                      default=str), flush=True)

app = omni.kit.app.get_app()
m = app.get_extension_manager()
ours = [e for e in m.get_extensions() if e["name"] == "mimic_ext"]
report("found", len(ours) == 1, ours)
layout = [e for e in m.get_extensions() if e["name"] == "mimic_ext_config_layout"]
report("config_layout_found", len(layout) == 1,
       m.get_extension_dict(layout[0]["id"]).get_dict()["configPath"] if layout else "not found")
if ours:
    ext_id = ours[0]["id"]
    d = m.get_extension_dict(ext_id).get_dict()   # a carb dictionary item; get_dict() is plain Python
    report("manifest_parsed", d["configPath"].endswith("/extension.toml"),
           {"configPath": d["configPath"], "path": d["path"],
            "python.module": [x["name"] for x in d["python"]["module"]],
            "dependencies": d["dependencies"], "settings": d.get("settings")})
    pip = d["python"]["pipapi"]
    reqs, mods = list(pip["requirements"]), list(pip.get("modules", []))
    mapping = []
    for i, req in enumerate(reqs):
        module = mods[i] if len(mods) > i else req.split("==")[0]   # omni.kit.pipapi _process_ext_pipapi_config/install
        try:
            importlib.import_module(module)
            have = True
        except ImportError:
            have = False
        mapping.append({"requirement": req, "imports": module, "in_kit_python": have})
    report("pipapi_modules", all(x["imports"].isidentifier() for x in mapping), mapping)
    ok = m.set_extension_enabled_immediate("mimic_ext", True)
    setting = carb.settings.get_settings().get("/exts/mimic_ext/fet022/fallbackReportDir")
    report("settings_applied", setting == "", {"/exts/mimic_ext/fet022/fallbackReportDir": setting})
    # ok None = not proved: said as such, never counted as a pass (the bare kernel lacks the Kit layer's modules)
    try:
        kit_layer = importlib.import_module("mimic_ext.kit")
        report("kit_layer_import", True, "imported (the kernel had every module it needs)")
    except ImportError as exc:
        kit_layer = None
        report("kit_layer_import", None, f"not proved: mimic_ext.kit stops at {type(exc).__name__}: {exc}")
    started = kit_layer is not None and kit_layer.get_extension() is not None
    enabled = {"set_extension_enabled_immediate": ok, "is_extension_enabled": m.is_extension_enabled("mimic_ext"),
               "mimic_ext.kit imported": kit_layer is not None, "MimicExtension started": started}
    if started:
        report("enabled", True, enabled)
    elif kit_layer is None:
        report("enabled", None, {**enabled, "why": "not proved: Kit lists it enabled, but mimic_ext.kit did not "
                                 "import, so MimicExtension.on_startup never ran"})
    else:
        report("enabled", False, {**enabled, "why": "mimic_ext.kit imported but MimicExtension did not start"})
# Kernel behaviours the stand-ins copy (tests/kit_stubs): carb.settings and omni.ext.
s = carb.settings.get_settings()
report("carb_settings_missing_key", s.get("/exts/mimic_ext/no_such_key") is None and s.get_as_string("/exts/mimic_ext/no_such_key") == "",
       [s.get("/exts/mimic_ext/no_such_key"), s.get_as_string("/exts/mimic_ext/no_such_key")])
names = {i: omni.ext.get_extension_name(i) for i in ("mimic_ext-0.1.0", "omni.kit.commands-1.2.3-beta.1", "omni.bar-tag-2.0.1")}
report("get_extension_name", names == {"mimic_ext-0.1.0": "mimic_ext", "omni.kit.commands-1.2.3-beta.1": "omni.kit.commands",
                                       "omni.bar-tag-2.0.1": "omni.bar-tag"}, names)
app.post_quit()
"""


def _kit_executable(arg: str | None) -> str:
    kit = arg or os.environ.get("MIMIC_EXT_KIT") or shutil.which("isaacsim")
    if not kit:
        sys.exit(
            "tools/kit_kernel_check.py: no Kit kernel: pass --kit PATH/TO/isaacsim or set MIMIC_EXT_KIT "
            "(install: pip install isaacsim-kernel==6.2.0.0 in a Python 3.12 venv)"
        )
    return kit


def _placeholder(folder: Path, name: str) -> None:
    (folder / name / "config").mkdir(parents=True)
    (folder / name / "config" / "extension.toml").write_text(
        f'[package]\nversion = "0.0.0"\ntitle = "placeholder for {name} (not in the bare kernel)"\n'
    )


def _log_checks(output: str) -> list[dict]:
    """What Kit's own log says about solving and importing (info level)."""
    lines = output.splitlines()
    start = next((i for i, ln in enumerate(lines) if "Processing exts enabling request: 'mimic_ext'" in ln), 0)
    solver = next((ln for ln in lines[start:] if "Solver result:" in ln), "")
    deps_at = next((i for i, ln in enumerate(lines) if "[ext: mimic_ext-0.1.0] deps:" in ln), None)
    selected = []
    if deps_at is not None:
        for ln in lines[deps_at + 1 :]:
            if not ln.startswith(" -> "):
                break
            selected.append(ln.strip()[3:].split("'")[1])
    core = next((ln for ln in lines if "Searching for classes derived from 'omni.ext.IExt' in 'mimic_ext'" in ln), "")
    failed = next((ln for ln in lines if "Failed to import python module mimic_ext" in ln), "")
    return [
        {
            "name": "solver",
            "ok": "succeeded" in solver and bool(selected),
            "detail": {"result": solver.split("] ", 2)[-1].strip(), "dependencies_selected": selected},
        },
        {"name": "kit_imported_core_module", "ok": bool(core), "detail": core.split("] ", 2)[-1].strip()},
        {
            "name": "kit_layer_stops_at",
            "ok": None if failed else True,
            "detail": (("not proved: " + failed.split("] ", 2)[-1].strip()) if failed else "no import error"),
        },
    ]


def verdict(check: dict) -> str:
    """``ok``, ``FAIL`` or ``NOT PROVED`` (ok None: the kernel could not show it; never a pass)."""
    return {True: "ok", False: "FAIL"}.get(check["ok"], "NOT PROVED")


def exit_code(checks: list[dict], expected: set[str]) -> int:
    """0 when every expected check was reported and none failed (not-proved ones are listed, not passed)."""
    seen = {c["name"] for c in checks}
    return 0 if checks and expected <= seen and all(c["ok"] is not False for c in checks) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kit", help="the kernel's launcher (isaacsim of isaacsim-kernel); default $MIMIC_EXT_KIT or PATH")
    ap.add_argument("--log", type=Path, help="also write Kit's whole output here")
    args = ap.parse_args(argv)
    kit = _kit_executable(args.kit)
    manifest = tomllib.loads((PROJECT / "extension.toml").read_text())
    with tempfile.TemporaryDirectory(prefix="mimic_ext_kit_") as tmp:
        tmp = Path(tmp)
        exts, deps, layout = tmp / "exts", tmp / "deps", tmp / "layout"
        exts.mkdir()
        (exts / EXT_NAME).symlink_to(PROJECT, target_is_directory=True)  # the folder name is the extension name
        (layout / "mimic_ext_config_layout" / "config").mkdir(parents=True)
        shutil.copyfile(PROJECT / "extension.toml", layout / "mimic_ext_config_layout" / "config" / "extension.toml")
        required = [n for n, spec in manifest["dependencies"].items() if not spec.get("optional")]
        for name in required:
            _placeholder(deps, name)
        probe = tmp / "probe.py"
        probe.write_text(PROBE)
        cmd = [
            kit,
            "omni.app.empty.kit",
            "--no-window",
            "--ext-folder",
            str(exts),
            "--ext-folder",
            str(deps),
            "--ext-folder",
            str(layout),
            "--/app/extensions/registryEnabled=0",
            "--/log/outputStreamLevel=Info",
            "--exec",
            str(probe),
        ]
        env = dict(os.environ, OMNI_KIT_ACCEPT_EULA="YES", OMNI_KIT_ALLOW_ROOT="1")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env, cwd=tmp)
    output = proc.stdout + proc.stderr
    if args.log:
        args.log.write_text(output)
    found: dict[str, dict] = {}
    decoder = json.JSONDecoder()
    for line in output.splitlines():  # Kit echoes stdout into its log: the same report can appear twice
        if "MIMIC_CHECK " in line:
            check, _ = decoder.raw_decode(line.split("MIMIC_CHECK ", 1)[1])
            found.setdefault(check["name"], check)
    checks = list(found.values()) + _log_checks(output)
    print(f"Kit kernel: {kit}  (exit {proc.returncode})")
    print(f"placeholder extensions for the kernel's missing dependencies: {', '.join(required)}")
    for c in checks:
        print(f"CHECK {verdict(c)} {c['name']}: {json.dumps(c['detail'], default=str)}")
    unproved = [c["name"] for c in checks if c["ok"] is None]
    if unproved:
        print(f"NOT PROVED by this kernel: {', '.join(unproved)}")
    errors = [line for line in output.splitlines() if "[Error]" in line]
    for line in errors[:5]:
        print(f"KIT ERROR LINE: {line.strip()[:300]}")
    expected = {
        "found",
        "config_layout_found",
        "manifest_parsed",
        "pipapi_modules",
        "settings_applied",
        "kit_layer_import",
        "enabled",
        "carb_settings_missing_key",
        "get_extension_name",
        "solver",
        "kit_imported_core_module",
        "kit_layer_stops_at",
    }
    seen = {c["name"] for c in checks}
    if expected - seen:
        print(f"CHECK FAIL not reported by Kit: {', '.join(sorted(expected - seen))}")
    return exit_code(checks, expected)


if __name__ == "__main__":
    sys.exit(main())
