#!/usr/bin/env bash
# Build redist (Release) and run the main example under mpirun: a 900 x 700 window of a
# matrix moves from a 2 x 2 grid with 32 x 32 blocks to a 1 x P grid with 50 x 50 blocks;
# every rank prints what it sent, received and copied, and every element is checked.
# Installs missing Debian packages first. Usage: scripts/demo.sh [number of ranks, >= 4]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/deps.sh
ranks=${1:-4}
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DREDIST_BUILD_TESTS=OFF
cmake --build build/release -j"$REDIST_JOBS" --target redist_demo
mpirun --oversubscribe -n "$ranks" build/release/examples/redist_demo
