"""tools/kit_kernel_check.py says what it proved: its in-Kit probe, run against a stand-in of the bare Kit
kernel (carb, omni.ext, omni.kit.app and nothing else, as isaacsim-kernel 6.2 has them), must not report the
extension as enabled when mimic_ext.kit could not import and MimicExtension never started."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BARE_KERNEL = {
    "carb/__init__.py": """
        from . import settings
        def log_info(msg): pass
        log_warn = log_error = log_verbose = log_info
    """,
    "carb/settings/__init__.py": """
        class _Settings:
            def get(self, key): return "" if key.endswith("/fallbackReportDir") else None   # the applied [settings]
            def get_as_string(self, key): return ""
        def get_settings(): return _Settings()
    """,
    "omni/__init__.py": "",
    "omni/ext/__init__.py": """
        class IExt: pass
        def get_extension_name(ext_id):
            a, b, *_ = ext_id.split("-") + [""]
            return f"{a}-{b}" if b and not b.split(".")[0].isdigit() else a
    """,
    "omni/kit/__init__.py": "",
    "omni/kit/app/__init__.py": """
        class _Dict:
            def __init__(self, d): self._d = d
            def get_dict(self): return self._d
        class _Manager:
            def get_extensions(self):
                return [{"name": "mimic_ext", "id": "mimic_ext-0.1.0"},
                        {"name": "mimic_ext_config_layout", "id": "mimic_ext_config_layout-0.1.0"}]
            def get_extension_dict(self, ext_id):
                return _Dict({"configPath": "/x/mimic_ext/extension.toml", "path": "/x/mimic_ext",
                              "python": {"module": [{"name": "mimic_ext"}, {"name": "mimic_ext.kit"}],
                                         "pipapi": {"requirements": ["numpy"], "modules": ["numpy"]}},
                              "dependencies": {}, "settings": {}})
            def set_extension_enabled_immediate(self, name, on): return True   # Kit says yes even then
            def is_extension_enabled(self, name): return True
        class _App:
            def get_extension_manager(self): return _Manager()
            def post_quit(self): pass
        def get_app(): return _App()
    """,
}


def _tool():
    spec = importlib.util.spec_from_file_location("kit_kernel_check", ROOT / "tools" / "kit_kernel_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_probe_does_not_call_an_extension_whose_kit_layer_never_started_enabled(tmp_path):
    tool = _tool()
    for name, text in BARE_KERNEL.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    probe = tmp_path / "probe.py"
    probe.write_text(tool.PROBE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    out = subprocess.run(
        [sys.executable, str(probe)], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    checks = {
        c["name"]: c
        for c in (
            json.loads(line.split("MIMIC_CHECK ", 1)[1])
            for line in out.stdout.splitlines()
            if line.startswith("MIMIC_CHECK ")
        )
    }
    enabled, kit_layer = checks["enabled"], checks["kit_layer_import"]
    assert enabled["ok"] is None and enabled["detail"]["MimicExtension started"] is False
    assert "never ran" in enabled["detail"]["why"]
    assert kit_layer["ok"] is None and "omni.kit.commands" in kit_layer["detail"]
    assert tool.verdict(enabled) == "NOT PROVED" and tool.verdict(checks["found"]) == "ok"
    # not proved is listed, not failed, and never counted as a pass
    assert tool.exit_code(list(checks.values()), set(checks)) == 0
    assert tool.exit_code([*checks.values(), {"name": "x", "ok": False, "detail": ""}], set(checks)) == 1
