#!/usr/bin/env bash
# Install the Debian packages redist needs, if any is missing. Sourced by test.sh and demo.sh.
# The CI jobs (scripts/ci-*.sh) add theirs through REDIST_EXTRA_PACKAGES (space-separated).
redist_packages=(cmake make g++ gfortran pkg-config libopenmpi-dev openmpi-bin
                 libscalapack-openmpi-dev libgtest-dev glpk-utils python3 librsvg2-bin doxygen
                 ${REDIST_EXTRA_PACKAGES:-})
redist_missing=()
for pkg in "${redist_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
    redist_missing+=("$pkg")
done
if ((${#redist_missing[@]})); then
  echo "Installing missing Debian packages: ${redist_missing[*]}"
  redist_sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${redist_missing[*]}" >&2; exit 1; }
    redist_sudo=(sudo)
  fi
  "${redist_sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${redist_sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${redist_missing[@]}"
fi
# Open MPI refuses root and more ranks than cores unless told; tests run up to 8 ranks on
# small machines.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# Parallel build and test jobs: the processors online (nproc answers OMP_NUM_THREADS, set to 1
# above, so the scripts would build and test on one core).
export REDIST_JOBS=${REDIST_JOBS:-$(getconf _NPROCESSORS_ONLN)}
