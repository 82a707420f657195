#!/usr/bin/env python3
"""Check the layer rules of docs/architecture.md on the sources of src/.

Every quoted #include must name a header of the file's own layer or of a layer that layer may
use; the pure layers (layout, schedule, model) include neither MPI nor operating-system memory
headers, and redist_memory no MPI. The include paths of the CMake targets enforce the first rule
at build time; this test also catches a header reached through a wider include path (tests,
tools) and names the offending line.

  check_layers.py SRC_DIR          exit 0 when every rule holds, 1 with one line per breach
"""
import os
import re
import sys

# Layer -> the layers whose headers it may include (itself included).
ALLOWED = {
    "layout": {"layout"},
    "schedule": {"schedule", "layout"},
    "model": {"model", "schedule", "layout"},
    "exec/memory": {"exec/memory", "layout"},
    "exec": {"exec", "exec/memory", "schedule", "layout"},
    "api": {"api", "exec", "exec/memory", "model", "schedule", "layout"},
}
PURE = {"layout", "schedule", "model"}
# System headers that mean MPI or operating-system memory code.
MPI_HEADERS = {"mpi.h"}
OS_HEADERS = re.compile(r"^(sys/.*|unistd\.h|fcntl\.h|linux/.*)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of(relative_dir):
    """The layer a folder of src/ belongs to: its longest matching key of ALLOWED."""
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if relative_dir == layer or relative_dir.startswith(layer + "/"):
            return layer
    return None


def main(src):
    headers = {}  # header file name -> layer
    sources = []
    for root, _, files in os.walk(src):
        layer = layer_of(os.path.relpath(root, src).replace(os.sep, "/"))
        for name in files:
            if not name.endswith((".hpp", ".h", ".cpp", ".c")):
                continue
            path = os.path.join(root, name)
            if layer is None:
                print(f"{path}: not in a layer folder ({', '.join(sorted(ALLOWED))})")
                return 1
            if name.endswith((".hpp", ".h")):
                if name in headers:
                    print(f"{path}: header name also in layer {headers[name]}")
                    return 1
                headers[name] = layer
            sources.append((path, layer))

    breaches = []
    for path, layer in sources:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                quoted, name = match.group(1) == '"', match.group(2)
                where = f"{os.path.relpath(path, src)}:{number}"
                if quoted and name in headers and headers[name] not in ALLOWED[layer]:
                    breaches.append(f"{where}: layer {layer} includes {name} of layer "
                                    f"{headers[name]}")
                if not quoted and name in MPI_HEADERS and layer in PURE | {"exec/memory"}:
                    breaches.append(f"{where}: layer {layer} includes MPI ({name})")
                if not quoted and OS_HEADERS.match(name) and layer in PURE:
                    breaches.append(f"{where}: pure layer {layer} includes {name}")
    for breach in breaches:
        print(breach)
    print(f"{len(sources)} files in {len(ALLOWED)} layers, {len(breaches)} breaches")
    return 1 if breaches else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
