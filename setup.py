"""Native build only: the private extension ``bioaccel._native`` from csrc/, and the program
``bioaccel/bioaccel-nj`` (csrc/programs/: the low-memory neighbour joining that
``bioaccel tree --low-memory`` hands its work to, linked from the extension's objects).

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


def compiler_accepts(*flags: str) -> bool:
    """True when the C++ compiler builds and links a tiny program with ``flags`` (an OpenMP
    program when they hold ``-fopenmp``)."""
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.cpp")
        with open(src, "w") as f:
            if "-fopenmp" in flags:
                f.write(
                    "#include <omp.h>\nint main() { return omp_get_max_threads() > 0 ? 0 : 1; }\n"
                )
            else:
                f.write(
                    '#include <string>\nint main() { return std::string("x").size() == 1 ? 0 : 1; }\n'
                )
        result = subprocess.run(
            [cxx, *flags, src, "-o", os.path.join(tmp, "probe")], capture_output=True
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
    sorted(
        p for p in glob("csrc/*/*.cpp") if not p.startswith(("csrc/bindings/", "csrc/programs/"))
    )
    + sorted(glob("csrc/bindings/*.cpp")),
    include_dirs=["csrc/include"],
    extra_compile_args=extra_compile,
    extra_link_args=extra_link,
    cxx_std=17,
)

#: programs beside the extension: name -> (its main source, the extension sources it links)
PROGRAMS = {
    "bioaccel-nj": (
        "csrc/programs/nj_program.cpp",
        ["csrc/trees/nj.cpp", "csrc/distances/matrix_text.cpp"],
    ),
}


#: the C++ runtime linked in: about 0.8 MiB less resident memory than loading libstdc++.so
#: (bioaccel-nj is measured against QuickTree, a C program, to the MiB)
PROGRAM_LINK = (
    ["-static-libstdc++", "-static-libgcc"]
    if sys.platform.startswith("linux")
    and compiler_accepts("-static-libstdc++", "-static-libgcc", *extra_link)
    else []
)


class build_ext_and_programs(build_ext):
    """build_ext, then each program of PROGRAMS linked into the package folder beside the
    extension (in place too), from its main source and the extension's own objects."""

    def run(self):
        super().run()
        package_dir = os.path.dirname(self.get_ext_fullpath(ext.name))
        for name, (main_source, linked) in PROGRAMS.items():
            objects = self.compiler.compile(
                [main_source],
                output_dir=self.build_temp,
                include_dirs=ext.include_dirs,
                extra_postargs=[*extra_compile, "-std=c++17"],
            )
            objects += self.compiler.object_filenames(linked, output_dir=self.build_temp)
            self.compiler.link_executable(
                objects,
                name,
                output_dir=package_dir,
                extra_postargs=[*extra_link, *PROGRAM_LINK],
                target_lang="c++",
            )


setup(ext_modules=[ext], cmdclass={"build_ext": build_ext_and_programs})
