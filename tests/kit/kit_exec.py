"""``kit --exec "SCRIPT ARGS"`` against the stand-ins: run SCRIPT as Kit does, then Kit's frames until it quits.

Usage: ``python tests/kit/kit_exec.py --stubs DIR [--max-frames N] SCRIPT [ARGS...]``

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
"""

from __future__ import annotations

import argparse
import runpy
import sys
import time
from pathlib import Path

FRAME_SLEEP_S = 0.001
TIMED_OUT = 124


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stubs", required=True, type=Path)
    ap.add_argument("--max-frames", type=int, default=200_000)
    ap.add_argument("script", type=Path)
    ap.add_argument("args", nargs=argparse.REMAINDER)
    opts = ap.parse_args()
    sys.path[:] = [str(opts.stubs.resolve())] + [
        p for p in sys.path if not (Path(p or ".") / "mimic_ext" / "__init__.py").is_file()
    ]
    import omni.kit.app

    app = omni.kit.app.get_app()
    app.update()  # the app has started when --exec runs
    sys.argv = [str(opts.script), *opts.args]
    runpy.run_path(str(opts.script), run_name="__main__")
    frames = 0
    while app._stub_quit_code is None and frames < opts.max_frames:
        app.update()
        frames += 1
        time.sleep(FRAME_SLEEP_S)
    code = app._stub_quit_code
    app._stub_close()
    if code is None:
        print(f"kit_exec: no post_quit within {opts.max_frames} frames", file=sys.stderr, flush=True)
        return TIMED_OUT
    return code


if __name__ == "__main__":
    sys.exit(main())
