#!/usr/bin/env bash
# GPU checks for a machine with an NVIDIA GPU (never part of CI): installs CuPy for the
# driver's CUDA major version, runs the gpu-marked and backend tests on the real device
# (no simulator), then the GPU benchmarks (with the accurate MSA mode's posteriors).
# Each step has its own time limit (seconds, scaled by BIOACCEL_GPU_CHECK_SCALE, default 1),
# so one slow step cannot hide the others; the whole check finishes in under 8 minutes.
#
# BIOACCEL_GPU_CHECK_INSTALL=0 skips the pip install, for a machine with no registry where
# bioaccel's dependencies and its built extension are already importable (PYTHONPATH).
set -uo pipefail
cd "$(dirname "$0")/.."
export BIOACCEL_GPU_TESTS=1 PYTHONUNBUFFERED=1
unset NUMBA_ENABLE_CUDASIM
scale=${BIOACCEL_GPU_CHECK_SCALE:-1}
limit() { # limit SECONDS COMMAND...: run COMMAND for at most SECONDS x scale
    local s
    s=$(python3 -c "print(int($1 * $scale))")
    shift
    timeout --signal=INT --kill-after=10 "$s" "$@"
    local rc=$?
    [ $rc -eq 124 ] && echo "gpu-check: step ran past its ${s} s limit: $*"
    return $rc
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || exit 1
if [ "${BIOACCEL_GPU_CHECK_INSTALL:-1}" != 0 ]; then
    major=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9]*\)\..*/\1/p' | head -1)
    extra=cuda12
    [ "${major:-12}" -ge 13 ] && extra=cuda13
    python3 -m pip install -q -e ".[test,$extra]" || exit 1
fi
python3 -c "import sys, numpy, numba, cupy; print(sys.version.split()[0], 'numpy', numpy.__version__, 'numba', numba.__version__, 'cupy', cupy.__version__)"
python3 -m bioaccel.cli doctor --no-r --require gpu
status=0
# one stuck test must not eat the step: 60 s each where pytest-timeout is installed
per_test=$(python3 -c "import pytest_timeout" 2>/dev/null && echo --timeout=60)
limit 300 python3 -m pytest -v -p no:cacheprovider -m "not r" -rfE --durations=15 $per_test \
    tests/devices/test_gpu.py tests/msa/test_msa_gpu.py tests/msa/test_msa_accurate_gpu.py \
    tests/distances/test_dna_distances.py tests/pairwise/test_align.py tests/pairwise/test_edit.py \
    tests/devices/test_sched_devices.py tests/msa/test_msa_guide.py || status=1
# neighbours: the filter's candidates verified on every GPU backend
limit 30 python3 -m pytest -q -p no:cacheprovider -rfE tests/neighbors/test_edit_neighbors.py \
    -k "gpu or simulator or cuda" || status=1
# neighbours timed beside the CPU (the figures AUTO_GPU_FROM quotes)
limit 60 python3 benchmarks/bench_gpu.py --neighbours || status=1
limit 100 python3 benchmarks/bench_gpu.py || status=1
echo "gpu-check: exit $status"
exit $status
