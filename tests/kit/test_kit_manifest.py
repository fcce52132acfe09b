"""extension.toml as Kit reads it: pip is not run when the modules are importable, and it installs no schema.

Kit's pipapi (omni/kit/pipapi/pipapi.py, ExtensionManagerPip._process_ext_pipapi_config and
install, reproduced by the stand-in) imports ``modules[i]`` (default: the requirement string up
to "==") to decide whether ``requirements[i]`` is already there.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
MANIFEST = PROJECT / "extension.toml"
#: The Kit extension that provides each omni/carb module the Kit layer imports.
PROVIDERS = {
    "carb": None,
    "omni.ext": None,
    "omni.kit.app": None,  # Kit's kernel
    "omni.usd": "omni.usd",
    "omni.ui": "omni.ui",
    "omni.kit.commands": "omni.kit.commands",
    "omni.kit.undo": "omni.kit.commands",
    "omni.kit.window.property": "omni.kit.window.property",
    "omni.kit.property.usd": "omni.kit.property.usd",
    "omni.kit.menu.utils": "omni.kit.menu.utils",
    "omni.kit.actions.core": "omni.kit.actions.core",
    "omni.kit.context_menu": "omni.kit.context_menu",
    "omni.kit.notification_manager": "omni.kit.notification_manager",
    "omni.kit.test": "omni.kit.test",
    "omni.physx": "omni.physx",
    "omni.physics.tensors": "omni.physx.tensors",
}


def _manifest() -> dict:
    return tomllib.loads(MANIFEST.read_text())


def _enable(ext_dict: dict, ext_id: str = "mimic_ext-0.1.0"):
    """What omni.kit.pipapi does before Kit enables the extension; the pip commands it would run."""
    import omni.kit.app
    import omni.kit.pipapi

    omni.kit.app.get_app().get_extension_manager()._stub_add_extension(ext_id, ext_dict)
    omni.kit.pipapi.pip_calls.clear()
    omni.kit.pipapi.ExtensionManagerPip.on_before_ext_enabled(ext_id)
    return list(omni.kit.pipapi.pip_calls)


def test_enabling_runs_no_pip_when_yaml_warp_and_numpy_import():
    assert _enable(_manifest()) == []


def test_without_modules_kit_would_run_pip_on_every_enable():
    """The stand-in does what Kit does with the old manifest: it imports "pyyaml>=6.0" and fails."""
    old = {"python": {"pipapi": {"requirements": ["pyyaml>=6.0", "numpy"], "use_online_index": True}}}
    assert _enable(old) == [["--isolated", "install", "pyyaml>=6.0"]]
    assert _enable(old) == [["--isolated", "install", "pyyaml>=6.0"]]  # again: nothing was cached


def test_dependencies_cover_every_import_and_no_schema_is_pip_installed():
    manifest = _manifest()
    pipapi = manifest["python"]["pipapi"]
    assert len(pipapi["modules"]) == len(pipapi["requirements"])
    assert not [r for r in pipapi["requirements"] if "schema" in r or r.startswith("usd-core")]
    deps = manifest["dependencies"]
    assert "omni.kit.pipapi" in deps
    for optional in (
        "omni.usd.schema.physx",
        "omni.usd.schema.newton",
        "omni.warp.core",
        "omni.physx",
        "omni.physx.tensors",
    ):
        assert deps[optional] == {"optional": True}, optional
    imported = set()
    for path in (PROJECT / "mimic_ext" / "kit").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                else []
            )
            imported.update(n for n in names if n.split(".")[0] in ("omni", "carb"))
    for module in imported:
        provider = next((PROVIDERS[p] for p in PROVIDERS if module == p or module.startswith(p + ".")), "unknown")
        assert provider != "unknown", f"{module}: say which Kit extension provides it"
        if provider and provider != "omni.kit.test":
            assert provider in deps, f"{module} needs the dependency {provider}"
    assert {"mimic_ext", "mimic_ext.kit"} == {m["name"] for m in manifest["python"]["module"]}
