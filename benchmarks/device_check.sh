#!/usr/bin/env bash
# The solver on a GPU: its tests on cuda:0, then grasp and Robotiq throughput against MuJoCo
# Warp and Newton on the same GPU. Under 5 minutes on a machine with one NVIDIA GPU (the time
# boxes below add up to 4.5 minutes; it has not run on a GPU yet, so that is a budget, not a
# measurement).
#
#   bash benchmarks/device_check.sh [--install DIR] [--device NAME]
#
# 1. Whether Warp sees a CUDA device (wp.get_cuda_device_count()). None: one line saying so,
#    exit 0 (the check needs a GPU; nothing else runs).
# 2. The solver and contact tests (TEST_FILES) with `pytest --device cuda:0`: every model the
#    tests build defaults to the GPU (tests/conftest.py); tests that hold only on the CPU by
#    nature (threads slicing a CPU launch) are skipped with their reason. Time box TEST_S (150 s).
# 3. `benchmarks/gpu_throughput.py --device cuda:0 --sizes 1024 4096 16384`: env-steps/s of our
#    grasp and Robotiq against MuJoCo Warp and Newton, their slip/gaps and ratios; a peer that
#    cannot be imported is skipped with the reason. Time box BENCH_S (120 s, its --deadline 90 s).
# Exit status: 0 when both passed (or there is no CUDA), else the first failing step's.
#
# --install DIR: DIR holds the parts benchmarks/device_wheels.sh made (bundle.tar.NN, copied
#    there one device call at a time; that script's header gives the procedure). They are
#    joined, unpacked, the wheels installed with pip --no-index --no-deps --target DIR/site,
#    which goes on PYTHONPATH, and the bundled assets linked in as ../shared/assets.
# --device NAME: run steps 2 and 3 on NAME instead of cuda:0 (`--device cpu` checks this script
#    here, on smaller sizes); without CUDA, only an explicit cpu runs anything.
# Logs: $OUT (the device machine's folder that comes back) or LOG_DIR, else /tmp.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
DEVICE=cuda:0
INSTALL=
while [ $# -gt 0 ]; do
  case "$1" in
    --install) INSTALL=$2; shift 2 ;;
    --device) DEVICE=$2; shift 2 ;;
    *) echo "device_check: unknown argument $1 (use --install DIR, --device NAME)"; exit 2 ;;
  esac
done
LOGS=${OUT:-${LOG_DIR:-/tmp}}
TEST_S=${TEST_S:-150}
BENCH_S=${BENCH_S:-120}
TEST_FILES="tests/test_solver_relations.py tests/test_solver_loops.py tests/test_solver_drives.py
  tests/test_solver_compliant.py tests/test_solver_precision.py tests/test_solver_step_many.py
  tests/test_solver_threads.py tests/test_contact_rows.py tests/test_grasp.py tests/test_device_check.py"

if [ -n "$INSTALL" ]; then
  set -e
  ( cd "$INSTALL" && cat bundle.tar.[0-9][0-9] > bundle.tar && tar -xf bundle.tar && rm -f bundle.tar )
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$INSTALL/site" \
      "$INSTALL"/wheels/*.whl
  if [ -f "$INSTALL/assets.tar.gz" ] && [ ! -e "$ROOT/../shared/assets" ]; then
    tar -C "$INSTALL" -xzf "$INSTALL/assets.tar.gz"
    mkdir -p "$ROOT/../shared" && ln -s "$INSTALL/assets" "$ROOT/../shared/assets"
  fi
  export PYTHONPATH="$INSTALL/site${PYTHONPATH:+:$PYTHONPATH}"
  set +e
  echo "device_check: installed $(ls "$INSTALL"/wheels | wc -l) wheels into $INSTALL/site"
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1

err=$(mktemp)
cuda=$("$PY" -c "from mimic_ext.warp_runtime import init_warp; print(init_warp().get_cuda_device_count())" 2>"$err")
if ! [[ "$cuda" =~ ^[0-9]+$ ]]; then
  echo "device_check: Warp cannot start with $PY ($(tail -n 1 "$err")); install it (benchmarks/device_wheels.sh)"
  exit 1
fi
if [ "$cuda" = 0 ] && [ "$DEVICE" != cpu ]; then
  echo "device_check: no CUDA device here (Warp sees none): the GPU check did not run"
  exit 0
fi
echo "device_check: $cuda CUDA device(s); checking on $DEVICE"
command -v nvidia-smi >/dev/null && nvidia-smi -L

SIZES="1024 4096 16384"
[ "$DEVICE" = cpu ] && SIZES="4" && BENCH_ARGS="--steps 5" || BENCH_ARGS=""
t0=$SECONDS
# SIGINT at the time box: pytest stops and still prints its summary
# shellcheck disable=SC2086
timeout -s INT -k 15 "$TEST_S" "$PY" -m pytest -q -p no:cacheprovider -rfEs --tb=short --durations=5 \
    --device "$DEVICE" $TEST_FILES 2>&1 | tee "$LOGS/device_tests.log" | grep -v "^WARNING"
tests=${PIPESTATUS[0]}
echo "device_check: tests exit $tests after $((SECONDS - t0)) s"
t1=$SECONDS
# shellcheck disable=SC2086
timeout -k 15 "$BENCH_S" "$PY" benchmarks/gpu_throughput.py --device "$DEVICE" --sizes $SIZES --deadline 90 \
    $BENCH_ARGS 2>&1 | tee "$LOGS/device_throughput.log"
bench=${PIPESTATUS[0]}
echo "device_check: throughput exit $bench after $((SECONDS - t1)) s; total $((SECONDS - t0)) s"
[ "$tests" != 0 ] && exit "$tests"
exit "$bench"
