#!/usr/bin/env bash
# GPU checks for a machine with an NVIDIA GPU (never part of CI): installs CuPy for the
# driver's CUDA major version, runs the gpu-marked and backend tests on the real device
# (no simulator), then the GPU benchmarks (with the accurate MSA mode's posteriors). Meant to finish in under 8 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
export BIOACCEL_GPU_TESTS=1 PYTHONUNBUFFERED=1
unset NUMBA_ENABLE_CUDASIM
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || exit 1
major=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9]*\)\..*/\1/p' | head -1)
extra=cuda12; [ "${major:-12}" -ge 13 ] && extra=cuda13
python3 -m pip install -q -e ".[test,$extra]" || exit 1
bioaccel doctor --no-r --require gpu
status=0
python3 -m pytest -q -m "not r" tests/distances/test_dna_distances.py tests/pairwise/test_align.py tests/pairwise/test_edit.py tests/devices/test_gpu.py tests/devices/test_sched_devices.py tests/msa/test_msa_gpu.py tests/msa/test_msa_guide.py tests/msa/test_msa_accurate_gpu.py || status=1
python3 benchmarks/bench_gpu.py || status=1
# neighbours: the filter's candidates verified on every GPU backend, timed beside the CPU
python3 -m pytest -q tests/neighbors/test_edit_neighbors.py -k "gpu or simulator" || status=1
python3 - <<'PY' || status=1
import time
from benchmarks.amplicon_sim import simulate
from bioaccel.backends import available_backends
from bioaccel.neighbors import neighbors
_, seqs, _ = simulate(20000, seed=3)
seqs = [s.decode() for s in seqs]
for d in (1, 2, 3):
    for name in ("cpu", "cupy", "numba-cuda"):
        if available_backends()[name] is not None:
            continue
        t = time.perf_counter()
        nb = neighbors(seqs, max_distance=d, backend=name)
        print(f"neighbors d={d} {name}: {time.perf_counter() - t:.2f} s, {len(nb)} pairs, {nb.candidates} candidates")
    t = time.perf_counter()
    nb = neighbors(seqs, max_distance=d, devices="all")
    print(f"neighbors d={d} devices=all: {time.perf_counter() - t:.2f} s, {len(nb)} pairs")
PY
exit $status
