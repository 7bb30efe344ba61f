#!/usr/bin/env python3
"""Writes crates/mpiapi/include/mpi.h from the facts of the MPI-5.0 standard ABI.

The handle values, constants, the MPI_Status layout and the C prototypes are those
of the MPI Forum's reference header (github.com/mpi-forum/mpi-abi-stubs, mpi.h, MIT
licence). This script reads that file (path as argument), keeps the facts (names,
values, types, prototypes), drops its portability preamble and comments, and writes
them in myrix's arrangement with myrix's preamble. Run once; the output is committed.

    python3 tools/abi_header.py /path/to/mpi-abi-stubs/mpi.h > include/mpi.h
"""
import re
import sys

ref = open(sys.argv[1]).read().splitlines()

PREAMBLE = """\
/*
 * mpi.h of myrix (libmpi_abi.so, pkg-config name myrix-mpi).
 *
 * The C interface of MPI 5.0 following the standard ABI (MPI-5.0 chapter
 * "Application Binary Interface"): handles are pointers to incomplete structs with
 * fixed small values, integer constants have fixed values, MPI_Status is 32 bytes,
 * MPI_Aint is intptr_t and MPI_Offset/MPI_Count are int64_t. A program compiled
 * against this header runs with any library of that ABI, and one compiled against
 * another ABI header (MPICH's mpi_abi.h) runs with myrix's.
 *
 * The values and prototypes are the standard's; they were checked against the MPI
 * Forum's reference header (mpi-forum/mpi-abi-stubs, MIT licence) by
 * crates/mpiapi/tools/abi_header.py, which wrote this file.
 *
 * Every function declared here links. What myrix does not implement yet prints
 * "myrix MPI: MPI_Xxx is not implemented yet" on standard error and returns
 * MPI_ERR_UNSUPPORTED_OPERATION (through MPI_COMM_WORLD's error handler, so under
 * the default MPI_ERRORS_ARE_FATAL the job ends). docs/mpi.md lists what works.
 */
#ifndef MYRIX_MPI_H
#define MYRIX_MPI_H
#define MPI_H_ABI 1

#include <stdint.h>

#if defined(__cplusplus)
extern "C" {
#endif

/* The implementation (myrix). */
#define MYRIX_MPI 1

#define MPI_VERSION    5
#define MPI_SUBVERSION 0

#define MPI_ABI_VERSION    1
#define MPI_ABI_SUBVERSION 0

/* ---- Integer types ---- */
typedef intptr_t MPI_Aint;
typedef int64_t  MPI_Offset;
typedef int64_t  MPI_Count;

/* ---- Status: 32 bytes; the five internal ints are the library's ---- */
typedef struct {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int MPI_internal[5];
} MPI_Status;
"""

# Start after the Status struct; stop before the prototypes.
start = next(i for i, l in enumerate(ref) if l.startswith("typedef struct MPI_ABI_Op"))
protos = next(i for i, l in enumerate(ref) if l.startswith("/* MPI functions */"))
pstart = next(i for i, l in enumerate(ref) if l.startswith("/* PMPI functions */"))
end = next(i for i, l in enumerate(ref) if l.startswith("#if defined(__cplusplus)") and i > pstart)

body = []
for l in ref[start:protos]:
    # Drop trailing remarks (history, other implementations' values); keep values.
    l = re.sub(r"\s*/\*\s*(added|deprecated|MPICH)[^*]*\*/\s*$", "", l)
    m = re.match(r"^(#define\s+)(\w+)\s+(.*)$", l)
    if m:
        l = f"#define {m.group(2):<34} {m.group(3)}"
    m = re.match(r"^(\s+)(\w+)\s*=\s*(.*)$", l)
    if m:
        l = f"    {m.group(2):<34} = {m.group(3)}"
    body.append(l.rstrip())

SECTIONS = {
    "typedef struct MPI_ABI_Op*": "/* ---- Handles: incomplete struct pointers with the ABI's fixed values ---- */",
    "/* MPI_T types and constants */": "/* ---- The tool information interface (MPI_T) ---- */",
}
out = [PREAMBLE]
for l in body:
    for k, v in SECTIONS.items():
        if l.startswith(k):
            out.append(v)
            if l == k:
                l = None
            break
    if l is not None:
        out.append(l)

def proto_lines(lines):
    got = []
    for l in lines:
        l = re.sub(r"\s*/\*[^*]*\*/\s*$", "", l).rstrip()
        if re.match(r"^[A-Za-z_][\w ]*\**\s*P?MPI_\w+\(.*\);$", l):
            got.append(l)
    return got

mpi = proto_lines(ref[protos:pstart])
pmpi = proto_lines(ref[pstart:end])
out.append("")
out.append(f"/* ---- Functions ({len(mpi)}) ---- */")
out.extend(mpi)
out.append("")
out.append("/* ---- The profiling interface: the same functions as PMPI_ ---- */")
out.extend(pmpi)
out.append("""
#if defined(__cplusplus)
}
#endif

#endif /* MYRIX_MPI_H */""")
text = "\n".join(out) + "\n"
text = re.sub(r"\n{3,}", "\n\n", text)
sys.stdout.write(text)
