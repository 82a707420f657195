#!/usr/bin/env python3
"""Check the layer rules of docs/architecture.md on the sources of src/ and research/.

Every quoted #include must name a header of the file's own layer or of a layer that layer may
use; no layer of src/ may use research/ (the models and studies beside the library); the pure
layers (layout, schedule) and research include neither MPI nor operating-system memory headers,
and redist_memory no MPI. The include paths of the CMake targets enforce the first rule at build
time; this test also catches a header reached through a wider include path (tests, tools) and
names the offending line.

  check_layers.py SRC_DIR RESEARCH_DIR   exit 0 when every rule holds, 1 with one line per breach
"""
import os
import re
import sys

# Layer -> the layers whose headers it may include (itself included).
ALLOWED = {
    "layout": {"layout"},
    "schedule": {"schedule", "layout"},
    "exec/memory": {"exec/memory", "layout"},
    "exec": {"exec", "exec/memory", "schedule", "layout"},
    "api": {"api", "exec", "exec/memory", "schedule", "layout"},
    # Everything in RESEARCH_DIR, whatever its subfolder.
    "research": {"research", "schedule", "layout"},
}
PURE = {"layout", "schedule", "research"}
# System headers that mean MPI or operating-system memory code.
MPI_HEADERS = {"mpi.h"}
OS_HEADERS = re.compile(r"^(sys/.*|unistd\.h|fcntl\.h|linux/.*)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of(relative_dir):
    """The layer a folder of src/ belongs to: its longest matching key of ALLOWED."""
    for layer in sorted(set(ALLOWED) - {"research"}, key=len, reverse=True):
        if relative_dir == layer or relative_dir.startswith(layer + "/"):
            return layer
    return None


def folders(src, research):
    """(folder, its files, its layer) for every folder under src/ and research/."""
    for root, _, files in os.walk(src):
        yield root, files, layer_of(os.path.relpath(root, src).replace(os.sep, "/"))
    for root, _, files in os.walk(research):
        yield root, files, "research"


def main(src, research):
    headers = {}  # header file name -> layer
    sources = []
    for root, files, layer in folders(src, research):
        for name in files:
            if not name.endswith((".hpp", ".h", ".cpp", ".c")):
                continue
            path = os.path.join(root, name)
            if layer is None:
                layers = sorted(set(ALLOWED) - {"research"})
                print(f"{path}: not in a layer folder ({', '.join(layers)})")
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
                where = f"{os.path.relpath(path, os.path.dirname(os.path.normpath(src)))}:{number}"
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
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
