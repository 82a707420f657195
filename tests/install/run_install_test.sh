#!/usr/bin/env bash
# Install redist from a build tree into a fresh prefix, then build one C example (demo.c) and one
# Fortran example (adi.f90) out of tree against the installed package -- with find_package and
# with pkg-config -- and run each under mpiexec.
# Usage: run_install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR MPIEXEC
set -euo pipefail
build=$1 source=$2 work=$3 libdir=$4 mpiexec=$5
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
echo "installed: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"

run() { # name, executable: run on 4 processes, echo the output
  echo "--- $1"
  "$mpiexec" -n 4 --oversubscribe "$2"
}

cmake -S "$source/tests/install/consumer" -B "$work/with-cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  -DREDIST_EXAMPLES_DIR="$source/examples" -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log"
cmake --build "$work/with-cmake" >>"$work/cmake.log"
run "find_package, C" "$work/with-cmake/consumer_demo"
run "find_package, Fortran" "$work/with-cmake/consumer_adi"

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
mkdir -p "$work/with-pkg-config"
cd "$work/with-pkg-config"
# shellcheck disable=SC2046 # pkg-config's output is a list of flags
mpicc -o demo "$source/examples/demo.c" $(pkg-config --cflags --libs redist)
# shellcheck disable=SC2046
mpif90 -o adi "$source/examples/adi.f90" $(pkg-config --cflags --libs redist-fortran)
export LD_LIBRARY_PATH=$prefix/$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
run "pkg-config, C" ./demo
run "pkg-config, Fortran" ./adi
