"""Native build only: the private extension ``bioaccel._native`` from csrc/.

OpenMP is used when the compiler accepts ``-fopenmp``; set ``BIOACCEL_NO_OPENMP=1``
to build without it. ``bioaccel.show_config()`` reports which build you got.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from glob import glob

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup


def compiler_accepts(flag: str) -> bool:
    """True when the C++ compiler builds and links a tiny OpenMP program with ``flag``."""
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.cpp")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main() { return omp_get_max_threads() > 0 ? 0 : 1; }\n")
        result = subprocess.run(
            [cxx, flag, src, "-o", os.path.join(tmp, "probe")], capture_output=True
        )
        return result.returncode == 0


# compile the sources in parallel (BIOACCEL_BUILD_JOBS, default: all cores)
ParallelCompile("BIOACCEL_BUILD_JOBS", default=0).install()

use_openmp = (
    os.environ.get("BIOACCEL_NO_OPENMP", "") not in ("1", "true", "yes")
    and sys.platform != "win32"
    and compiler_accepts("-fopenmp")
)

# no FMA contraction: every path computes the same expressions to the same bits
extra_compile = ["-O3", "-ffp-contract=off"]
extra_link = []
if use_openmp:
    extra_compile.append("-fopenmp")
    extra_link.append("-fopenmp")

ext = Pybind11Extension(
    "bioaccel._native",
    # csrc/<stage>/*.cpp: core (CPU probe), align, distances, kmers, trees, msa; bindings/ last
    sorted(p for p in glob("csrc/*/*.cpp") if not p.startswith("csrc/bindings/"))
    + sorted(glob("csrc/bindings/*.cpp")),
    include_dirs=["csrc/include"],
    extra_compile_args=extra_compile,
    extra_link_args=extra_link,
    define_macros=[("BIOACCEL_BUILD_OPENMP", "1" if use_openmp else "0")],
    cxx_std=17,
)

setup(ext_modules=[ext], cmdclass={"build_ext": build_ext})
