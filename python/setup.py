"""Builds and installs the `tessera` Python package:

    pip install --no-build-isolation python/

with Debian's setuptools, numpy and Python headers only (python3-setuptools,
python3-numpy, python3-dev); nothing is downloaded. Where libtessera comes
from, first match wins:

  TESSERA_BUILD_DIR=DIR   an existing CMake build tree of this repository
                          (DIR/lib/libtessera.so and the provider plugins,
                          DIR/bin/tessera): they are copied into the package.
  TESSERA_PREFIX=DIR      an installed Tessera SDK (`cmake --install build
                          --prefix DIR`): the extension links DIR/lib's
                          libtessera with an rpath to it; nothing is copied.
  otherwise               the repository around python/ is built with CMake
                          (Release; libtessera, the providers that configure,
                          the CLI) into python/build/cmake, and copied in.

Copied into the package, the layout is tessera/lib/libtessera.so.0 with the
plugins beside it (where discovery looks), tessera/bin/tessera (the CLI,
for tessera.compare; its rpath is $ORIGIN/../lib), and the extension
tessera/_tessera*.so with rpath $ORIGIN/lib.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def version():
    header = os.path.join(REPO, "abi", "include", "tessera", "tessera.h")
    try:
        with open(header, encoding="utf-8") as f:
            text = f.read()
        parts = [re.search(r"#define TESSERA_VERSION_%s (\d+)" % k, text).group(1)
                 for k in ("MAJOR", "MINOR", "PATCH")]
        return ".".join(parts)
    except (OSError, AttributeError):
        return "0.0.0"


def cmake_build():
    """Builds libtessera, the plugins and the CLI; returns the build dir."""
    build = os.path.join(HERE, "build", "cmake")
    cmake = shutil.which("cmake")
    if not cmake or not os.path.exists(os.path.join(REPO, "CMakeLists.txt")):
        sys.exit("tessera: no cmake or no Tessera source tree above python/; "
                 "set TESSERA_BUILD_DIR (a build tree) or TESSERA_PREFIX (an installed SDK)")
    subprocess.check_call([cmake, "-S", REPO, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                           "-DTESSERA_PYTHON=OFF"])
    targets = subprocess.run([cmake, "--build", build, "--target", "help"], stdout=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout
    want = ["tessera", "tessera_cli"] + sorted(set(re.findall(r"\b(tessera_provider_\w+)\b", targets)))
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    subprocess.check_call([cmake, "--build", build, "-j", jobs, "--target"] + want)
    return build


class BuildExt(build_ext):
    def run(self):
        prefix = os.environ.get("TESSERA_PREFIX")
        ext = self.extensions[0]
        ext.include_dirs.append(numpy_include())
        if prefix and not os.environ.get("TESSERA_BUILD_DIR"):
            libdir = next((d for d in (os.path.join(prefix, "lib"), os.path.join(prefix, "lib64"))
                           if glob.glob(os.path.join(d, "libtessera.so*"))),
                          os.path.join(prefix, "lib"))
            ext.include_dirs.append(os.path.join(prefix, "include"))
            ext.library_dirs.append(libdir)
            ext.extra_link_args.append("-Wl,-rpath," + os.path.abspath(libdir))
            super().run()
            return
        build = os.environ.get("TESSERA_BUILD_DIR") or cmake_build()
        build = os.path.abspath(build)
        libdir = os.path.join(build, "lib")
        if not glob.glob(os.path.join(libdir, "libtessera.so*")):
            sys.exit("tessera: %s has no lib/libtessera.so; build it first" % build)
        ext.include_dirs.append(os.path.join(REPO, "abi", "include"))
        ext.library_dirs.append(libdir)
        ext.extra_link_args.append("-Wl,-rpath,$ORIGIN/lib")
        super().run()
        # bundle the library, its plugins and the CLI beside the extension
        pkg = os.path.join(self.build_lib, "tessera")
        if self.inplace:
            pkg = os.path.join(HERE, "tessera")
        os.makedirs(os.path.join(pkg, "lib"), exist_ok=True)
        real = os.path.realpath(os.path.join(libdir, "libtessera.so"))
        shutil.copy2(real, os.path.join(pkg, "lib", "libtessera.so.0"))  # its SONAME
        for plugin in glob.glob(os.path.join(libdir, "libtessera_provider_*.so")):
            shutil.copy2(plugin, os.path.join(pkg, "lib"))
        cli = os.path.join(build, "bin", "tessera")
        if os.path.exists(cli):
            os.makedirs(os.path.join(pkg, "bin"), exist_ok=True)
            shutil.copy2(cli, os.path.join(pkg, "bin", "tessera"))


def numpy_include():
    import numpy
    return numpy.get_include()


setup(
    name="tessera",
    version=version(),
    description="Tessera, a heterogeneous ONNX inference runtime: ONNX Runtime's Python session API",
    packages=["tessera"],
    ext_modules=[Extension(
        "tessera._tessera",
        sources=["src/tessera_module.c", "src/tessera_iobinding.c", "src/tessera_stages.c"],
        libraries=["tessera"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-std=c11", "-Wall", "-Wextra"],
    )],
    cmdclass={"build_ext": BuildExt},
    python_requires=">=3.10",
    install_requires=["numpy"],
    zip_safe=False,
)
