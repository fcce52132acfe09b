"""Contact detection per second (env-detections/s) against MuJoCo's, and the collision
module's cold compile against the solver's.

    python benchmarks/collision_throughput.py [--sizes 1 64 1024] [--rounds 5] [--no-compile]

Scene: a gripper-sized cluster of free shapes that all touch: a palm box, two finger
boxes, two knuckle capsules, a 5 cm box resting on a plane (13 touching pairs). Ours:
``CollisionModel.collide`` on N environments (one Warp thread each, CPU; frames given).
MuJoCo: ``mj_kinematics`` + ``mj_collision`` on the same geoms with the same margins, one
environment at a time on one thread (N times the single-environment cost). Rounds
alternate ours / MuJoCo (A B A B); medians are printed with their ratio, which is robust
to the load of a shared machine.

The compile figures come from fresh subprocesses with empty kernel caches: Warp's one-time
start-up (a one-line kernel), then the solver's module and ours in one order, then the
other; CPU seconds of each, medians over the runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HALF = {"palm": (0.04, 0.02, 0.01), "lf": (0.005, 0.01, 0.03), "rf": (0.005, 0.01, 0.03), "obj": (0.025, 0.025, 0.025)}
CAPS = {"lk": (0.006, 0.015), "rk": (0.006, 0.015)}
POS = {
    "palm": (0, 0, 0.11),
    "lf": (0.0305, 0, 0.05),
    "rf": (-0.0305, 0, 0.05),
    "lk": (0.03, 0, 0.09),
    "rk": (-0.03, 0, 0.09),
    "obj": (0, 0, 0.0249),
}
OFFSET, PLANE_OFFSET = 0.02, 0.005


def ours(num_envs: int):
    import warp as wp

    from mimic_ext.solver.collision import CollisionModel, MaterialSpec, ShapeSpec

    def spec(name, kind, size):
        return ShapeSpec(
            path=f"/{name}",
            kind=kind,
            body=name,
            static=False,
            pose=np.eye(4),
            size=np.array(size, float),
            contact_offset=OFFSET,
            rest_offset=0.0,
            material=MaterialSpec(),
        )

    shapes = [spec(n, "box", h) for n, h in HALF.items()] + [
        spec(n, "capsule", (r, h, 0)) for n, (r, h) in CAPS.items()
    ]
    ground = np.eye(4)
    shapes.append(
        ShapeSpec(
            path="/ground",
            kind="plane",
            body=None,
            static=True,
            pose=ground,
            size=np.zeros(3),
            contact_offset=PLANE_OFFSET,
            rest_offset=0.0,
            material=MaterialSpec(),
        )
    )
    cm = CollisionModel.of_shapes(shapes, num_envs=num_envs)
    poses = {}
    for n, p in POS.items():
        t = np.eye(4)
        t[:3, 3] = p
        poses[n] = np.broadcast_to(t, (num_envs, 4, 4))
    R, p = cm.frames(free_poses=poses)
    cm.collide(R, p)
    wp.synchronize()

    def run(reps):
        t = time.perf_counter()
        for _ in range(reps):
            cm.collide(R, p)
        wp.synchronize()
        return (time.perf_counter() - t) / reps

    return run, int(cm.contacts().count[0])


def mujoco_peer():
    import mujoco

    geoms = "".join(
        f'<body pos="{" ".join(map(str, POS[n]))}"><freejoint/><geom type="box" size="{" ".join(map(str, h))}"'
        f' margin="{OFFSET}"/></body>'
        for n, h in HALF.items()
    )
    geoms += "".join(
        f'<body pos="{" ".join(map(str, POS[n]))}"><freejoint/><geom type="capsule" size="{r} {h}"'
        f' margin="{OFFSET}"/></body>'
        for n, (r, h) in CAPS.items()
    )
    xml = f'<mujoco><worldbody><geom type="plane" size="1 1 0.1" margin="{PLANE_OFFSET}"/>{geoms}</worldbody></mujoco>'
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    mujoco.mj_collision(m, d)

    def run(reps):
        t = time.perf_counter()
        for _ in range(reps):
            mujoco.mj_kinematics(m, d)
            mujoco.mj_collision(m, d)
        return (time.perf_counter() - t) / reps

    return run, int(d.ncon)


COMPILE_SNIPPET = r"""
import importlib, importlib.util, os, sys, tempfile, time
import warp as wp
wp.config.kernel_cache_dir = tempfile.mkdtemp()
wp.config.quiet = True
wp.init()
path = os.path.join(tempfile.mkdtemp(), "tiny_startup.py")
with open(path, "w") as f:
    f.write("import warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n")
spec = importlib.util.spec_from_file_location("tiny_startup", path)
tiny = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tiny)
out = {}
for name in ["startup"] + sys.argv[1:]:
    mod = tiny if name == "startup" else importlib.import_module(name)
    c = time.process_time()
    wp.load_module(mod, device="cpu")
    out[name] = time.process_time() - c
print(repr(out))
"""


def compile_times(runs: int = 2) -> dict[str, float]:
    mods = ["mimic_ext.solver.kernels", "mimic_ext.solver.collision.kernels"]
    got: dict[str, list[float]] = {}
    for r in range(runs):
        order = mods if r % 2 == 0 else mods[::-1]
        res = subprocess.run(
            [sys.executable, "-c", COMPILE_SNIPPET, *order], capture_output=True, text=True, check=True, cwd=ROOT
        )
        for k, v in eval(res.stdout.strip().splitlines()[-1]).items():
            got.setdefault(k, []).append(v)
    return {k: statistics.median(v) for k, v in got.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()
    mj, mj_contacts = mujoco_peer()
    print(
        f"scene: 6 free shapes + plane, 13 touching pairs; contacts per environment: "
        f"ours {ours(1)[1]}, MuJoCo {mj_contacts}"
    )
    print(f"{'N':>6} {'ours env-det/s':>16} {'MuJoCo env-det/s':>18} {'ours/MuJoCo':>12}")
    for n in args.sizes:
        run, _ = ours(n)
        reps = max(3, 2000 // n)
        a, b = [], []
        for _ in range(args.rounds):
            a.append(run(reps) / n)
            b.append(mj(2000))
        ta, tb = statistics.median(a), statistics.median(b)
        print(f"{n:>6} {1 / ta:>16,.0f} {1 / tb:>18,.0f} {tb / ta:>12.2f}")
    if not args.no_compile:
        t = compile_times()
        print(
            f"cold compile, CPU s (medians of 2 fresh processes): Warp start-up {t['startup']:.2f}, "
            f"solver module {t['mimic_ext.solver.kernels']:.2f}, collision module "
            f"{t['mimic_ext.solver.collision.kernels']:.2f} "
            f"(= {t['mimic_ext.solver.collision.kernels'] / t['mimic_ext.solver.kernels']:.2f} x the solver's)"
        )


if __name__ == "__main__":
    main()
