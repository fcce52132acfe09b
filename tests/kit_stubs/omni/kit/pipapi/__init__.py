"""Stand-in for ``omni.kit.pipapi`` (behaviour of Kit's ``omni/kit/pipapi/pipapi.py``).

What Kit does, read from that file:
- ``ExtensionManagerPip.on_startup`` hooks ``BEFORE_EXTENSION_ENABLE`` for extensions that have a
  ``python/pipapi`` key, so only extensions enabled after omni.kit.pipapi get it (hence the dependency).
- ``ExtensionManagerPip._process_ext_pipapi_config(ext_id)``: with ``requirements`` but no
  ``use_online_index = true`` it only warns; otherwise it calls ``install(line, modules[idx])`` for
  every requirement, where ``modules`` is the ``[python.pipapi] modules`` list matched by index
  (None past its end).
- ``install(package, module=None, ...)``: ``module`` defaults to ``package.split("==")[0]``;
  ``_try_import(module)`` succeeding returns at once; then the ``.install_cache.json`` of earlier
  successful installs; then ``pkg_resources`` by ``package.lower().split("==")[0]``; only then pip
  (``call_pip``), and a success is cached only when the module imports afterwards. So
  ``"pyyaml>=6.0"`` with no module imports ``"pyyaml>=6.0"``, never succeeds, and runs pip on every
  enable.
Here pip is never run: ``call_pip`` records its arguments in ``pip_calls`` and fails (no network),
and the installed-distribution check uses ``importlib.metadata`` (what ``pkg_resources`` reads).
"""

from __future__ import annotations

import importlib
import importlib.metadata

import omni.kit.app

#: every pip command line the stand-in would have run
pip_calls: list[list[str]] = []
_cache: set[str] = set()


def _try_import(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def call_pip(args: list[str], surpress_output: bool = False) -> int:
    pip_calls.append(list(args))
    return 1


def install(
    package: str,
    module: str | None = None,
    ignore_import_check: bool = False,
    ignore_cache: bool = False,
    version: str | None = None,
    use_online_index: bool = True,
    surpress_output: bool = False,
    extra_args: list[str] | None = None,
) -> bool:
    if "==" not in package and version:
        package = f"{package}=={version}"
    if module is None:
        module = package.split("==")[0]
    if not ignore_import_check and _try_import(module):
        return True
    if not ignore_cache and package in _cache:
        return True
    installed = {d.metadata["Name"].lower() for d in importlib.metadata.distributions() if d.metadata["Name"]}
    if package.lower().split("==")[0] in installed:
        return True
    args = ["--isolated", "install"] + list(extra_args or []) + package.split()
    ok = use_online_index and call_pip(args, surpress_output) == 0
    if ok and not ignore_import_check:
        ok = _try_import(module)
    if ok:
        _cache.add(package)
    return ok


class ExtensionManagerPip:
    @staticmethod
    def on_before_ext_enabled(ext_id: str, *_):
        ExtensionManagerPip._process_ext_pipapi_config(ext_id)

    @staticmethod
    def _process_ext_pipapi_config(ext_id: str):
        d = omni.kit.app.get_app().get_extension_manager().get_extension_dict(ext_id)
        pip_dict = d.get("python", {}).get("pipapi", {})
        modules = pip_dict.get("modules", [])
        extra_args = []
        for line in pip_dict.get("repositories", []):
            extra_args.extend(["--extra-index-url", line])
        extra_args += pip_dict.get("extra_args", [])
        ignore_import_check = pip_dict.get("ignore_import_check", False)
        use_online_index = pip_dict.get("use_online_index", False)
        requirements = pip_dict.get("requirements", [])
        if requirements and not use_online_index:
            return
        for idx, line in enumerate(requirements):
            module = modules[idx] if len(modules) > idx else None
            install(
                line,
                module,
                extra_args=extra_args,
                use_online_index=use_online_index,
                ignore_import_check=ignore_import_check,
            )
