#!/usr/bin/env python3
"""Compile every C, C++ and Fortran code block of README.md and docs/ (not docs/studies)
against the built library, and run the complete programs under mpirun.

The conventions for docs writers (docs/developers.md, "Documentation checks"):

- A fenced block whose info string starts with `c`, `cpp` (or `c++`) or `fortran` is checked.
  Other blocks (`sh`, `cmake`, `text`, ...) are not.
- A block that defines `main` (C, C++) or is a `program` (Fortran) is a complete program: it is
  compiled, linked with libredist (and libredist_fortran for Fortran) and run under
  `mpirun --oversubscribe -np N`; N is 4 unless the info string says `np=N` (```c np=2).
  It must exit with status 0.
- Any other block is a fragment: it is compiled (not run) inside a function body (C, C++) or a
  program's executable part (Fortran), after the includes and `use`s of every public header
  and module. The names it uses but does not declare are declared in an HTML comment right
  before the block:

      <!-- declare: MPI_Comm comm; double *a_local, *b_local; redist_layout a, b; -->

  (Fortran: `<!-- declare: integer :: m, n; real(8), allocatable :: a(:, :) -->`, one
  declaration per `;`). Nothing else about the fragment changes.
- Every relative link of those files ([text](path) and [text](path#anchor)) must name a file
  that exists and, for a Markdown file, a heading that gives the anchor (GitHub's rule:
  lower case, punctuation dropped, spaces to hyphens).
- A fragment whose info string says `toplevel` (```c toplevel) is compiled at file scope (C,
  C++; type and function definitions) or in a module's specification part (Fortran).

Usage: snippets.py --root SRC --include DIR --lib DIR --fortran-lib DIR --modules DIR
                   [--mpicc mpicc] [--mpicxx mpicxx] [--mpif90 mpif90] [--mpiexec mpiexec]
Exit status 0 when every block compiles (and every program runs); the failures are printed
with the file and line of the block.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

LANGS = {"c": "c", "cpp": "cpp", "c++": "cpp", "fortran": "fortran"}
FENCE = re.compile(r"^(\s*)```(\S*)(.*)$")
DECLARE = re.compile(r"<!--\s*declare:(.*?)-->", re.S)

C_PRELUDE = """#include <mpi.h>
#include <redist.h>
#include <redist_ring.h>
#include <redist_scalapack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
"""
F_USES = """  use, intrinsic :: iso_fortran_env
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use redist
  use redist_ring
  use redist_scalapack
"""


def blocks(path):
    """(line, lang, info words, text, declarations) of each checked block of a Markdown file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    k = 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        indent, lang, rest = m.group(1), m.group(2).lower(), m.group(3).split()
        start = k
        body = []
        k += 1
        while k < len(lines) and not lines[k].strip().startswith("```"):
            line = lines[k]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            k += 1
        k += 1
        if lang not in LANGS:
            continue
        # The declarations of a fragment: an HTML comment ending on the lines just before.
        before = "\n".join(lines[max(0, start - 6):start])
        found = DECLARE.findall(before)
        declarations = found[-1] if found and before.rstrip().endswith("-->") else ""
        out.append((start + 1, LANGS[lang], rest, "\n".join(body) + "\n", declarations))
    return out


def slug(heading):
    """GitHub's anchor of a Markdown heading."""
    out = ""
    for ch in heading.strip().lower():
        if ch.isalnum() or ch in "-_ ":
            out += ch
    return out.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        text = re.sub(r"```.*?```", "", open(path, encoding="utf-8").read(), flags=re.S)
        cache[path] = {slug(m.group(1)) for m in re.finditer(r"(?m)^#+\s+(.*)$", text)}
    return cache[path]


def broken_links(path, root):
    """The relative links of a Markdown file whose file or anchor does not exist."""
    out = []
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r"\]\(([^)\s#]*)(?:#([^)\s]+))?\)", text):
        target, anchor = m.group(1), m.group(2)
        if re.match(r"[a-z]+:", target):
            continue
        line = text.count("\n", 0, m.start()) + 1
        where = f"{os.path.relpath(path, root)}:{line}"
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target \
            else path
        if not os.path.exists(resolved):
            out.append(f"{where}: link to {target}: no such file")
        elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
            out.append(f"{where}: link to {target}#{anchor}: no such heading")
    return out


def is_program(lang, text):
    if lang == "fortran":
        return re.search(r"^\s*program\s+\w+", text, re.M | re.I) is not None
    return re.search(r"\bint\s+main\s*\(", text) is not None


def source_of(lang, words, text, declarations):
    decls = [d.strip() for d in declarations.split(";") if d.strip()]
    if is_program(lang, text):
        return (C_PRELUDE + text) if lang != "fortran" else text
    if lang == "fortran":
        # use statements and declarations of the fragment go before its executable lines.
        uses, spec_lines, body = [], [], []
        for line in text.split("\n"):
            if re.match(r"\s*use\b", line, re.I):
                uses.append(line)
            elif re.match(r"\s*(type|integer|real|complex|character|logical)\b[^=!]*::", line,
                          re.I) and not re.match(r"\s*type\s+is\b", line, re.I):
                spec_lines.append(line)
            else:
                body.append(line)
        text = "\n".join(body)
        spec = "".join("  " + d + "\n" for d in decls) + "".join(l + "\n" for l in spec_lines)
        spec = "".join(u + "\n" for u in uses) + "  implicit none\n" + spec
        if "toplevel" in words:
            return ("module snippet_module\n" + F_USES + spec + text +
                    "end module snippet_module\n")
        return ("subroutine snippet()\n" + F_USES + spec + text +
                "end subroutine snippet\n")
    spec = "".join("  " + d + ";\n" for d in decls)
    if "toplevel" in words:
        return C_PRELUDE + "".join(d + ";\n" for d in decls) + text
    # The fragment's names are used (so -Wunused does not matter: no -Werror here anyway).
    return C_PRELUDE + "void snippet(void);\nvoid snippet(void) {\n" + spec + text + "}\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--include", required=True)
    parser.add_argument("--lib", required=True)
    parser.add_argument("--fortran-lib", default="")
    parser.add_argument("--modules", default="")
    parser.add_argument("--mpicc", default="mpicc")
    parser.add_argument("--mpicxx", default="mpicxx")
    parser.add_argument("--mpif90", default="mpif90")
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--no-fortran", action="store_true", help="skip Fortran blocks")
    parser.add_argument("--list", action="store_true", help="list the blocks and exit")
    args = parser.parse_args()

    files = [os.path.join(args.root, "README.md")]
    docs = os.path.join(args.root, "docs")
    for dirpath, dirnames, filenames in os.walk(docs):
        dirnames[:] = sorted(d for d in dirnames if os.path.join(dirpath, d) !=
                             os.path.join(docs, "studies"))
        files += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".md")]

    failures = []
    checked = programs = 0
    work = tempfile.mkdtemp(prefix="redist-snippets-")
    for path in files:
        rel = os.path.relpath(path, args.root)
        if not args.list:
            failures += broken_links(path, args.root)
        for line, lang, words, text, declarations in blocks(path):
            where = f"{rel}:{line}"
            if args.list:
                kind = "program" if is_program(lang, text) else "fragment"
                print(f"{where}: {lang} {kind}")
                continue
            if lang == "fortran" and args.no_fortran:
                continue
            checked += 1
            program = is_program(lang, text)
            stem = os.path.join(work, f"snippet{checked}")
            ext = {"c": ".c", "cpp": ".cpp", "fortran": ".f90"}[lang]
            with open(stem + ext, "w", encoding="utf-8") as f:
                f.write(source_of(lang, words, text, declarations))
            rpath = [f"-Wl,-rpath,{args.lib}"]
            if lang == "fortran":
                compiler = [args.mpif90, "-ffree-line-length-none", f"-I{args.modules}",
                            f"-J{work}"]
                libs = [f"-L{args.fortran_lib}", "-lredist_fortran", f"-L{args.lib}",
                        "-lredist", f"-Wl,-rpath,{args.fortran_lib}"] + rpath
            else:
                compiler = [args.mpicc, "-std=c11"] if lang == "c" else [args.mpicxx,
                                                                         "-std=c++17"]
                compiler += ["-Wall", f"-I{args.include}"]
                libs = [f"-L{args.lib}", "-lredist"] + rpath
            if program:
                command = compiler + [stem + ext, "-o", stem] + libs
            else:
                command = compiler + ["-c", stem + ext, "-o", stem + ".o"]
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                failures.append(f"{where}: does not compile ({' '.join(command)}):\n"
                                f"{result.stdout}{result.stderr}")
                continue
            if not program:
                continue
            programs += 1
            np = 4
            for word in words:
                if word.startswith("np="):
                    np = int(word[3:])
            run = [args.mpiexec, "--oversubscribe", "-np", str(np), stem]
            try:
                result = subprocess.run(run, capture_output=True, text=True, timeout=120)
                if result.returncode != 0:
                    failures.append(f"{where}: exit status {result.returncode} under "
                                    f"{' '.join(run)}:\n{result.stdout}{result.stderr}")
            except subprocess.TimeoutExpired:
                failures.append(f"{where}: no exit within 120 s under {' '.join(run)}")
    if args.list:
        return 0
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"{checked} blocks compiled, {programs} programs run, {len(failures)} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
