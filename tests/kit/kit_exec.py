"""``kit --exec "SCRIPT ARGS"`` against the stand-ins: run SCRIPT as Kit does, then Kit's frames until it quits.

Usage: ``python tests/kit/kit_exec.py --stubs DIR [--app full|empty] [--enable EXT]... [--/SETTING=VALUE]...
[--max-frames N] SCRIPT [ARGS...]``

What Kit does, and what this does for it:
- Kit's own Python has the Kit modules (here: the stand-ins in ``--stubs``, first on ``sys.path``) and no
  mimic_ext: every ``sys.path`` entry that provides a ``mimic_ext`` package (an editable install) is dropped,
  so only an extension folder Kit adds on enable provides it.
- ``--exec`` runs the file through ``IAppScripting.execute_file(path, args)`` (``omni/kit/app/_app.pyi``) on
  Kit's thread once the app has started; the script gets its arguments in ``sys.argv`` (assumed: ``[path,
  *args]``) and runs as a file (``__file__`` set). Here: ``runpy.run_path(SCRIPT, run_name="__main__")``.
- Kit then runs frames (``IApp.update()``) until ``post_quit(return_code)``, and exits with that code after
  its shutdown disables the extensions (the stand-in app's ``_stub_close``). Here frames run until the
  script posts quit, at most ``--max-frames`` (then exit code 124, as a timeout), ~1 ms apart like a
  running app's frames, which leaves the sweep's job thread the processor.
- Which app (the stand-in app's ``_stub_start``): ``full`` (default; Isaac Sim, ``omni.app.full.kit``) has a run
  loop and starts ``omni.kit.async_engine`` and ``omni.kit.commands`` before ``--exec``; ``empty``
  (``omni.app.empty.kit``) starts only what ``--enable`` names and has no run loop: after the script Kit logs "No
  run loop was found, quitting..." and shuts down, unless ``--/app/runWithoutRunloop=true`` (then frames run
  as in a full app). ``--/a/b=v`` sets the carb setting ``/a/b`` first, as on Kit's command line. The exit code
  is the first ``post_quit``'s, one posted by a shutdown-stream subscriber included, else 0 (the real kernel
  6.2 with ``omni.app.empty.kit``, probed with ``--exec``).
"""

from __future__ import annotations

import argparse
import runpy
import sys
import time
from pathlib import Path

FRAME_SLEEP_S = 0.001
TIMED_OUT = 124


def _setting(token: str) -> tuple[str, object]:
    """``--/a/b=v`` -> (``/a/b``, v as bool, int, float or str), as Kit reads its command line."""
    path, _, text = token[2:].partition("=")
    value: object = text
    if text.lower() in ("true", "false"):
        value = text.lower() == "true"
    else:
        for kind in (int, float):
            try:
                value = kind(text)
                break
            except ValueError:
                pass
    return path, value


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stubs", required=True, type=Path)
    ap.add_argument("--app", choices=("full", "empty"), default="full")
    ap.add_argument("--enable", action="append", default=[])
    ap.add_argument("--max-frames", type=int, default=200_000)
    ap.add_argument("script", type=Path)
    ap.add_argument("args", nargs=argparse.REMAINDER)
    argv = sys.argv[1:]
    split = next((i for i, a in enumerate(argv) if a.endswith(".py")), len(argv))  # settings come before SCRIPT
    settings = dict(_setting(a) for a in argv[:split] if a.startswith("--/"))
    opts = ap.parse_args([a for a in argv[:split] if not a.startswith("--/")] + argv[split:])
    sys.path[:] = [str(opts.stubs.resolve())] + [
        p for p in sys.path if not (Path(p or ".") / "mimic_ext" / "__init__.py").is_file()
    ]
    import omni.kit.app

    full = opts.app == "full"
    enable = (omni.kit.app.FULL_APP_EXTENSIONS if full else ()) + tuple(opts.enable)
    app = omni.kit.app._stub_start(run_loop=full, enable=enable, settings=settings)
    app.update()  # the app has started when --exec runs
    sys.argv = [str(opts.script), *opts.args]
    runpy.run_path(str(opts.script), run_name="__main__")
    if not app._stub_has_run_loop():
        print("[Warning] [omni.kit.app.plugin] No run loop was found, quitting...", file=sys.stderr, flush=True)
        return app._stub_close()
    frames = 0
    while app._stub_quit_code is None and frames < opts.max_frames:
        app.update()
        frames += 1
        time.sleep(FRAME_SLEEP_S)
    if app._stub_quit_code is None:
        print(f"kit_exec: no post_quit within {opts.max_frames} frames", file=sys.stderr, flush=True)
        app._stub_close()
        return TIMED_OUT
    return app._stub_close()


if __name__ == "__main__":
    sys.exit(main())
