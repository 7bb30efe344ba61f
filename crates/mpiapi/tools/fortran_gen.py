#!/usr/bin/env python3
"""Writes myrix's Fortran interface from include/mpi.h (run from crates/mpiapi):

  src/fortran/generated.rs  mpi_x_ / pmpi_x_ entry points (gfortran's names) over
                            the C functions MPI_X / PMPI_X
  include/mpif.h            the constants and predefined handles for Fortran
  include/mpi.f90           the `mpi` module (myrix mpifort compiles it on first use)
  src/fortran/MISSING.txt   the C functions given no Fortran entry point, and why
  src/fortran/f08.rs        mpi_x_f08_ / pmpi_x_f08_, the mpi_f08 module's procedures
                            (include/mpi.f90 also holds the module: see "mpi_f08" below)

The output is committed; run `python3 tools/fortran_gen.py` after changing mpi.h.
`--check` exits 1 when a committed file differs from what it would write.

Conversion rules (each argument by reference, `ierror` last, hidden string lengths
after it as gfortran passes them): handles are INTEGER converted with the ABI's
MPI_X_fromint / MPI_X_toint; a status is INTEGER(MPI_STATUS_SIZE), the same eight
ints as the C MPI_Status; strings are blank-padded; LOGICAL is gfortran's (1 is
.TRUE.), which is C's int; buffer sentinels are recognised by address in
super::rt. What these rules cannot express is left out, so it fails to link.
"""
import re
import sys
from pathlib import Path

HANDLES = {
    "MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Errhandler": "Errhandler",
    "MPI_File": "File", "MPI_Group": "Group", "MPI_Info": "Info",
    "MPI_Message": "Message", "MPI_Op": "Op", "MPI_Request": "Request",
    "MPI_Session": "Session", "MPI_Win": "Win",
}
BUFFERS = {"buf", "sendbuf", "recvbuf", "inbuf", "outbuf", "inoutbuf", "origin_addr",
           "result_addr", "compare_addr", "base", "location", "buffer"}
WIDE = {"MPI_Aint": "isize", "MPI_Offset": "i64", "MPI_Count": "i64"}


def prototypes(header):
    out = []
    for line in header.splitlines():
        m = re.match(r"^(int|double|MPI_Aint) (MPI_\w+)\((.*)\);$", line)
        if m:
            params = [] if m.group(3) in ("", "void") else [p.strip() for p in m.group(3).split(",")]
            out.append((m.group(1), m.group(2), params))
    return out


def split(param):
    """(type, name, is_array) of a C parameter."""
    if param == "...":
        return ("...", "", False)
    m = re.match(r"^(.*?)(\w+)\s*((?:\[\w*\])*)$", param)
    ty, name, arr = m.group(1).strip(), m.group(2), m.group(3)
    ty = ty.replace(" *", "*").replace("* ", "*")
    # An array parameter is a pointer; `ranges[][3]` stays apart.
    return (ty + "*" if arr == "[]" else ty, name, bool(arr))


class Skip(Exception):
    pass


def convert(name, params):
    """Fortran parameters, C arguments, statements before and after the call."""
    # `back`: handles written back whatever the result (some requests of a failed
    # MPI_Waitall completed); `post`: what only a success wrote.
    fparams, cargs, pre, post, back, lens = [], [], [], [], [], []
    fd = []  # (name, kind) per Fortran dummy argument, for the mpi_f08 module
    names = [split(p)[1] for p in params]
    count = next((n for n in ("count", "incount") if n in names), None)
    for p in params:
        ty, n, arr = split(p)
        base = ty.replace("const ", "")
        const = ty.startswith("const ")
        if ty == "...":
            continue
        if (base, n) == ("char***", "argv") or (base, n) == ("int*", "argc"):
            cargs.append("std::ptr::null_mut()")
            continue
        if base == "int" and not arr:
            fd.append((n, "logical_in" if n in LOGICALS else "int_in"))
            fparams.append(f"{n}: *const c_int")
            cargs.append(f"*{n}")
        elif base == "int*":
            kind = "logical" if n in LOGICALS else "int"
            fd.append((n, kind + ("_arr" if arr else "") + ("_in" if const else "")))
            fparams.append(f"{n}: *mut c_int")
            if "weights" in n:
                cargs.append(f"rt::weights({n})")
            elif n == "array_of_errcodes":
                cargs.append(f"rt::errcodes({n})")
            else:
                cargs.append(n)
            if n == "indx":
                post.append(f"rt::one_based({n}, 1);")
            elif n == "array_of_indices":
                post.append(f"rt::one_based({n}, *outcount);")
        elif base == "void*" and n in BUFFERS:
            fd.append((n, "buf_in" if const else "buf"))
            fparams.append(f"{n}: *mut c_void")
            cargs.append(f"rt::buf({n})")
        elif base in HANDLES and not arr:
            fd.append((n, "handle_in:" + base))
            fparams.append(f"{n}: *const c_int")
            cargs.append(f"MPI_{HANDLES[base]}_fromint(*{n})")
        elif base.endswith("*") and base[:-1] in HANDLES:
            conv = HANDLES[base.rstrip("*")]
            fd.append((n, ("handle_arr" if arr else "handle") + ("_in:" if const else ":") + base[:-1]))
            fparams.append(f"{n}: *mut c_int")
            if not arr:
                pre.append(f"let mut h_{n} = MPI_{conv}_fromint(*{n});")
                cargs.append(f"&mut h_{n}")
                back.append(f"*{n} = MPI_{conv}_toint(h_{n});")
            else:
                if count is None:
                    raise Skip(f"array of {base.rstrip('*')} without a count")
                pre.append(f"let mut h_{n}: Vec<usize> = (0..rt::len(*{count})).map(|i| MPI_{conv}_fromint(*{n}.add(i))).collect();")
                cargs.append(f"h_{n}.as_mut_ptr()")
                if not const:
                    back.append(f"for (i, h) in h_{n}.iter().enumerate() {{ *{n}.add(i) = MPI_{conv}_toint(*h); }}")
        elif base == "MPI_Status*":
            fd.append((n, "status_arr" if arr or "statuses" in n else "status"))
            fparams.append(f"{n}: *mut c_int")
            cargs.append(f"rt::{'statuses' if 'statuses' in n else 'status'}({n})")
        elif base in WIDE and not arr:
            fd.append((n, "wide_in:" + base))
            fparams.append(f"{n}: *const {WIDE[base]}")
            cargs.append(f"*{n}")
        elif base.endswith("*") and base[:-1] in WIDE:
            fd.append((n, ("wide_arr" if arr else "wide") + ("_in:" if const else ":") + base[:-1]))
            fparams.append(f"{n}: *mut {WIDE[base.rstrip('*')]}")
            cargs.append(n)
        elif base == "char*" and const:
            fd.append((n, "str_in"))
            fparams.append(f"{n}: *const c_char")
            lens.append(f"{n}_len: usize")
            pre.append(f"let s_{n} = rt::str_in({n}, {n}_len);")
            cargs.append(f"s_{n}.as_ptr()")
        elif base == "char*":
            fd.append((n, "str"))
            fparams.append(f"{n}: *mut c_char")
            lens.append(f"{n}_len: usize")
            pre.append(f"let mut s_{n} = rt::str_buf({n}_len);")
            cargs.append(f"s_{n}.as_mut_ptr()")
            post.append(f"rt::str_out({n}, {n}_len, &s_{n});")
        elif p == "int ranges[][3]":
            fd.append((n, "ranges"))
            fparams.append(f"{n}: *mut c_int")
            cargs.append(n)
        else:
            raise Skip(f"argument `{p}`")
    return fparams, cargs, pre, back + (["if r == MPI_SUCCESS {"] + post + ["}"] if post else []), lens, fd


def rust(protos):
    out = ["// Generated by tools/fortran_gen.py from include/mpi.h: do not edit.",
           "// Each `f!` line is one Fortran subroutine (or function) under its MPI and",
           "// PMPI names (src/fortran/mod.rs); its body converts and calls the C function.",
           "", "use super::rt;", "use super::*;", ""]
    missing, entries = [], []
    decls = {f"    fn MPI_{c}_fromint(i: c_int) -> usize;" for c in HANDLES.values()}
    decls |= {f"    fn MPI_{c}_toint(h: usize) -> c_int;" for c in HANDLES.values()}
    for ret, name, params in protos:
        if name.endswith("_c") or name.startswith("MPI_T_") or name.endswith(("_fromint", "_toint")):
            continue
        try:
            fparams, cargs, pre, post, lens, fd = convert(name, params)
        except Skip as why:
            missing.append(f"{name}: {why}")
            continue
        low = name.lower()
        rty = {"int": "c_int", "double": "f64", "MPI_Aint": "isize"}[ret]
        call = f"c({', '.join(cargs)})"
        body = " ".join(pre)
        if ret == "int":
            fparams.append("ierror: *mut c_int")
            body += f" let r = {call}; {' '.join(post)} rt::set(ierror, r);".replace("  ", " ")
            rtype = ""
        else:
            body += f" {call}"
            rtype = f" -> {rty}"
        cparams = ", ".join(cargtype(p) for p in params if p != "...")
        decls.add(f"    fn {name}({cparams}) -> {rty};")
        decls.add(f"    fn P{name}({cparams}) -> {rty};")
        out.append(f"f!({low}_ / p{low}_ = {name} / P{name}, |c| ({', '.join(fparams + lens)}){rtype} {{ {body.strip()} }});")
        entries.append((ret, name, fparams, lens, fd, rtype))
    out.insert(7, "extern \"C\" {\n" + "\n".join(sorted(decls)) + "\n}\n")
    return "\n".join(out) + "\n", missing, entries


def cargtype(p):
    """The Rust type of a C parameter in the extern declaration (as src/ declares
    it: `const` pointers are `*const`)."""
    ty, n, arr = split(p)
    const = ty.startswith("const ")
    base = ty.replace("const ", "")
    ptr = "*const" if const else "*mut"
    if base in HANDLES:
        return f"{n}: usize"
    if base == "int" and not arr:
        return f"{n}: c_int"
    if base in WIDE:
        return f"{n}: {WIDE[base]}"
    if base.endswith("*") and base[:-1] in HANDLES:
        return f"{n}: {ptr} usize"
    if base.endswith("*") and base[:-1] in WIDE:
        return f"{n}: {ptr} {WIDE[base[:-1]]}"
    if base == "MPI_Status*":
        return f"{n}: {ptr} MPI_Status"
    if base == "int*" or p == "int ranges[][3]":
        return f"{n}: {ptr} c_int"
    if base == "char*":
        return f"{n}: {ptr} c_char"
    return f"{n}: {ptr} c_void"


def constants(header):
    """mpi.h's constants, {name: (value, C type or None)}, and its aliases."""
    vals = {}
    for m in re.finditer(r"#define (MPI_\w+|MPIX_\w+)\s+\(\((MPI_\w+)\)(0x[0-9a-f]+|-?\d+)\)", header):
        if m.group(2) in HANDLES or m.group(2) == "MPI_Offset":
            vals[m.group(1)] = (int(m.group(3), 0), m.group(2))
    for m in re.finditer(r"#define (MPI_\w+)\s+(\d+)\s*$", header, re.M):
        vals[m.group(1)] = (int(m.group(2)), None)
    for m in re.finditer(r"^\s+(MPIX?_\w+)\s*=\s*(-?0x[0-9A-Fa-f]+|-?\d+),?", header, re.M):
        vals.setdefault(m.group(1), (int(m.group(2), 0), None))
    aliases = {m.group(1): m.group(2) for m in re.finditer(r"#define (MPI_\w+)\s+(MPI_\w+)\s*$", header, re.M)}
    return vals, aliases


def mpif(header):
    lines = ["! mpif.h of myrix (libmpi_abi.so): the MPI-5.0 ABI constants.",
             "! Generated by crates/mpiapi/tools/fortran_gen.py from mpi.h: do not edit.",
             "! Valid as fixed and free source form. Handles are INTEGER: the C handle",
             "! values (MPI_Comm_toint of a predefined handle is its value).",
             "      INTEGER MPI_ADDRESS_KIND, MPI_OFFSET_KIND, MPI_COUNT_KIND",
             "      PARAMETER (MPI_ADDRESS_KIND=8)",
             "      PARAMETER (MPI_OFFSET_KIND=8)",
             "      PARAMETER (MPI_COUNT_KIND=8)",
             "      INTEGER MPI_INTEGER_KIND",
             "      PARAMETER (MPI_INTEGER_KIND=4)",
             "      INTEGER MPI_STATUS_SIZE, MPI_SOURCE, MPI_TAG, MPI_ERROR",
             ]
    typed, aliases = constants(header)
    vals = {k: (v, ty == "MPI_Offset") for k, (v, ty) in typed.items()}
    st = vals.pop("MPI_F_STATUS_SIZE")[0]
    fields = {k: vals.pop(f"MPI_F_{k[4:]}")[0] for k in ("MPI_SOURCE", "MPI_TAG", "MPI_ERROR")}
    lines.append(f"      PARAMETER (MPI_STATUS_SIZE={st})")
    for k, v in fields.items():
        lines.append(f"      PARAMETER ({k}={v + 1})")
    for k, (v, wide) in vals.items():
        if k.startswith("MPI_T_") or k in ("MPI_VERSION", "MPI_SUBVERSION") and False:
            continue
        lines.append(f"      INTEGER{'(KIND=MPI_OFFSET_KIND)' if wide else ''} {k}")
        lines.append(f"      PARAMETER ({k}={v})")
    for k, target in aliases.items():
        if target in vals:
            lines.append(f"      INTEGER {k}")
            lines.append(f"      PARAMETER ({k}={target})")
    for name, size in SENTINELS:
        dim = f"({size})" if size != "1" else ""
        lines.append(f"      INTEGER {name}{dim}")
        lines.append(f"      COMMON /{COMMON[name]}/ {name}")
    lines += ["      LOGICAL MPI_SUBARRAYS_SUPPORTED",
              "      PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)",
              "      LOGICAL MPI_ASYNC_PROTECTS_NONBLOCKING",
              "      PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)",
              "      DOUBLE PRECISION MPI_WTIME, MPI_WTICK",
              "      EXTERNAL MPI_WTIME, MPI_WTICK",
              "      INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF",
              "      EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF"]
    for l in lines:
        assert len(l) <= 72 or l.startswith("!"), l
    return "\n".join(lines) + "\n"


# Address sentinels: Fortran variables in common blocks the library also defines
# (super::rt looks their addresses up); their C values are in rt.
SENTINELS = [("MPI_BOTTOM", "1"), ("MPI_IN_PLACE", "1"), ("MPI_BUFFER_AUTOMATIC", "1"),
             ("MPI_STATUS_IGNORE", "MPI_STATUS_SIZE"),
             ("MPI_STATUSES_IGNORE", "MPI_STATUS_SIZE,1"), ("MPI_ERRCODES_IGNORE", "1"),
             ("MPI_UNWEIGHTED", "1"), ("MPI_WEIGHTS_EMPTY", "1")]
COMMON = {n: "MPIF_" + n[4:] for n, _ in SENTINELS}

MODULE = """! The `mpi` module of myrix: mpif.h's names. Generated by
! crates/mpiapi/tools/fortran_gen.py. It declares no procedure interfaces (calls
! are checked as with mpif.h); `myrix mpifort` compiles it on first use.
      MODULE MPI
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      END MODULE MPI
"""


# --- The mpi_f08 module (MPI-4.1 §19.1.2) ---------------------------------------
#
# Each function of the `mpi` module gets the specific procedure MPI_X_f08 under the
# generic name MPI_X, with handles as TYPE(MPI_X) (one INTEGER MPI_VAL: passed by
# reference it is the INTEGER the mpi_x_ entry point takes), TYPE(MPI_Status) (the
# C MPI_Status's eight ints), LOGICAL where the standard has it and ierror
# OPTIONAL (absent: NULL, which rt::set tolerates). A function without a choice
# buffer is an ordinary external (link name mpi_x_f08_, gfortran's hidden string
# lengths): src/fortran/f08.rs forwards it to mpi_x_. One with a buffer is BIND(C)
# with TYPE(*), DIMENSION(..) buffers and CHARACTER(LEN=*) strings, both passed as
# C descriptors that src/fortran/cfi.rs reads. MPI_SUBARRAYS_SUPPORTED is .FALSE.
# (nonblocking calls reject non-contiguous sections), so the names end in _f08,
# not _f08ts. The module has no procedure bodies: nothing of it needs linking.

LOGICALS = {"flag", "periods", "reorder", "remain_dims", "commute", "weighted"}
KINDS = {"MPI_Aint": "MPI_ADDRESS_KIND", "MPI_Offset": "MPI_OFFSET_KIND", "MPI_Count": "MPI_COUNT_KIND"}
# Calls that keep a buffer's address after returning, and calls that only take it.
KEEP = re.compile(r"^MPI_(I[a-z]\w*|\w+_init|Put|Get|Accumulate|Get_accumulate|Fetch_and_op"
                  r"|Compare_and_swap|Rput|Rget|Raccumulate|Rget_accumulate|Win_create|Win_attach"
                  r"|Buffer_attach|Comm_attach_buffer|Session_attach_buffer|File_i\w+|File_\w+_(begin|end))$")
ADDRESS_ONLY = {"MPI_Get_address", "MPI_Free_mem", "MPI_Win_detach"}


def mode(name):
    return "Addr" if name in ADDRESS_ONLY else "Keep" if KEEP.match(name) else "Copy"


def fdecl(name, n, kind):
    """The Fortran declaration of dummy argument `n`."""
    kind, _, ty = kind.partition(":")
    arr = "_arr" in kind
    intent = ", INTENT(IN)" if kind.endswith("_in") else ""
    base = kind.replace("_arr", "").replace("_in", "")
    dim = "(*)" if arr else ""
    if base == "buf":
        asyn = ", ASYNCHRONOUS" if mode(name) != "Copy" else ""
        return f"TYPE(*), DIMENSION(..){intent}{asyn} :: {n}"
    if base in ("int", "logical"):
        return f"{dict(int='INTEGER', logical='LOGICAL')[base]}{intent} :: {n}{dim}"
    if base == "handle":
        return f"TYPE({ty}){intent} :: {n}{dim}"
    if base == "status":
        return f"TYPE(MPI_Status) :: {n}{dim}"
    if base == "wide":
        return f"INTEGER(KIND={KINDS[ty]}){intent} :: {n}{dim}"
    if base == "str":
        return f"CHARACTER(LEN=*){intent} :: {n}"
    if base == "ranges":
        return f"INTEGER :: {n}(3,*)"
    raise AssertionError(kind)


def wrap(head, args, tail=""):
    """`head(args)tail` as free-form lines of at most 132 characters."""
    lines, cur = [], f"{head}("
    for i, a in enumerate(args):
        piece = a + ("," if i < len(args) - 1 else "")
        if len(cur) + len(piece) > 100:
            lines.append(cur + " &")
            cur = "      "
        cur += piece + ("" if i == len(args) - 1 else " ")
    last = cur + ")" + (" &\n     " + tail if tail else "")
    return "\n".join(lines + [last])


def f08_module(entries, header):
    typed, aliases = constants(header)
    st = typed["MPI_F_STATUS_SIZE"][0]
    fields = [typed[f"MPI_F_{k}"][0] for k in ("SOURCE", "TAG", "ERROR")]
    assert fields == [0, 1, 2], "TYPE(MPI_Status) assumes SOURCE, TAG, ERROR first"
    out = ["", "! The `mpi_f08` module (MPI-4.1 §19.1.2): handle types, named constants of",
           "! those types and explicit interfaces. Generated by tools/fortran_gen.py; the",
           "! procedures are in libmpi_abi.so (src/fortran/f08.rs), so nothing here is linked.",
           "MODULE MPI_F08",
           "IMPLICIT NONE",
           "INTEGER, PARAMETER :: MPI_ADDRESS_KIND = 8, MPI_OFFSET_KIND = 8, MPI_COUNT_KIND = 8",
           "INTEGER, PARAMETER :: MPI_INTEGER_KIND = 4",
           f"INTEGER, PARAMETER :: MPI_STATUS_SIZE = {st}",
           "LOGICAL, PARAMETER :: MPI_SUBARRAYS_SUPPORTED = .FALSE.",
           "LOGICAL, PARAMETER :: MPI_ASYNC_PROTECTS_NONBLOCKING = .FALSE."]
    for ty in sorted(HANDLES):
        out += [f"TYPE, BIND(C) :: {ty}", "  INTEGER :: MPI_VAL", f"END TYPE {ty}"]
    out += ["! The C MPI_Status: SOURCE, TAG and ERROR, then the library's own ints.",
            "TYPE, BIND(C) :: MPI_Status", "  INTEGER :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
            f"  INTEGER :: MYRIX_RESERVED({st - 3})", "END TYPE MPI_Status"]
    for k, (v, ty) in typed.items():
        if k.startswith(("MPI_T_", "MPI_F_")):
            continue
        if ty in HANDLES:
            out.append(f"TYPE({ty}), PARAMETER :: {k} = {ty}({v})")
        elif ty == "MPI_Offset":
            out.append(f"INTEGER(KIND=MPI_OFFSET_KIND), PARAMETER :: {k} = {v}")
        else:
            out.append(f"INTEGER, PARAMETER :: {k} = {v}")
    for k, target in aliases.items():
        if target in typed and not k.startswith(("MPI_T_", "MPI_F_")):
            ty = typed[target][1]
            decl = f"TYPE({ty})" if ty in HANDLES else "INTEGER"
            out.append(f"{decl}, PARAMETER :: {k} = {target}")
    out.append("! Address sentinels: the library's variables (the common blocks of mpif.h).")
    for name, size in SENTINELS:
        ty = "TYPE(MPI_Status)" if "STATUS" in name else "INTEGER"
        dim = "(1)" if "," in size or name in ("MPI_ERRCODES_IGNORE", "MPI_UNWEIGHTED", "MPI_WEIGHTS_EMPTY") else ""
        out.append(f'{ty}, BIND(C, NAME="{COMMON[name].lower()}_") :: {name}{dim}')
    for op, word in (("==", "eq"), ("/=", "ne")):
        out.append(f"INTERFACE OPERATOR({op})")
        for ty in sorted(HANDLES):
            f = f"myrix_f08_{ty[4:].lower()}_{word}"
            out += [f"  LOGICAL FUNCTION {f}(a, b)", f"    IMPORT {ty}",
                    f"    TYPE({ty}), INTENT(IN) :: a, b", f"  END FUNCTION {f}"]
        out.append("END INTERFACE")
    for ret, name, fparams, lens, fd, rtype in entries:
        args = [n for n, _ in fd] + (["ierror"] if ret == "int" else [])
        buffered = any(k.startswith("buf") for _, k in fd)
        spec = f"{name}_f08"
        bind = f' BIND(C, NAME="{spec.lower()}_")' if buffered else ""
        head = {"int": "SUBROUTINE", "double": "DOUBLE PRECISION FUNCTION",
                "MPI_Aint": "INTEGER(KIND=MPI_ADDRESS_KIND) FUNCTION"}[ret]
        out += [f"INTERFACE {name}", wrap(f"  {head} {spec}", args, bind), "    IMPORT"]
        out += [f"    {fdecl(name, n, k)}" for n, k in fd]
        if ret == "int":
            out.append("    INTEGER, OPTIONAL, INTENT(OUT) :: ierror")
        out += [f"  END {head.split()[-1]} {spec}", "END INTERFACE"]
    out.append("END MODULE MPI_F08")
    return "\n".join(out) + "\n"


def f08_rust(entries, header):
    typed, _ = constants(header)
    out = ["// Generated by tools/fortran_gen.py from include/mpi.h: do not edit.",
           "// The mpi_f08 entry points (src/fortran/mod.rs): `f8!` forwards a function",
           "// without a choice buffer to its mpi_x_ twin; `f!` lines convert descriptors.",
           "", "use super::cfi;", "use super::generated::*;", "use super::*;", ""]
    for ret, name, fparams, lens, fd, rtype in entries:
        low = name.lower()
        kinds = dict(fd)
        if not any(k.startswith("buf") for k in kinds.values()):
            out.append(f"f8!({low}_f08_ / p{low}_f08_ = {low}_ / p{low}_, ({', '.join(fparams + lens)}){rtype});")
            continue
        params, args, pre, tail = [], [], [], []
        obj = next((f"cfi::Obj::{HANDLES[k.split(':')[1]]}(*{n})" for n, k in fd
                    if k in ("handle_in:MPI_Comm", "handle_in:MPI_Win", "handle_in:MPI_File")),
                   f"cfi::Obj::Comm({typed['MPI_COMM_SELF'][0]})")
        for fp in fparams:
            n = fp.split(":")[0]
            k = kinds.get(n, "")
            if k.startswith("buf"):
                params.append(f"{n}: *const cfi::Cfi")
                out_ = "false" if k == "buf_in" else "true"
                pre.append(f"let b_{n} = match cfi::Choice::new({n}, cfi::Mode::{mode(name)}, {out_}) "
                           f"{{ Ok(b) => b, Err(r) => return cfi::fail(ierror, r, {obj}) }};")
                args.append(f"b_{n}.ptr()")
            elif k.startswith("str"):
                params.append(f"{n}: *const cfi::Cfi")
                pre.append(f"let s_{n} = cfi::str_arg({n});")
                args.append(f"s_{n}.0")
                tail.append(f"s_{n}.1")
            else:
                params.append(fp)
                args.append(n)
        body = " ".join(pre) + f" c({', '.join(args + tail)})"
        out.append(f"f!({low}_f08_ / p{low}_f08_ = {low}_ / p{low}_, |c| ({', '.join(params)}) {{ {body} }});")
    return "\n".join(out) + "\n"


def main():
    root = Path(__file__).resolve().parent.parent
    header = (root / "include/mpi.h").read_text()
    code, missing, entries = rust(prototypes(header))
    files = {
        root / "src/fortran/generated.rs": code,
        root / "src/fortran/MISSING.txt": "# C functions without a Fortran entry point (tools/fortran_gen.py), and why\n"
        "# (neither mpif.h / use mpi nor use mpi_f08). Also absent from mpi_f08: the PMPI_X\n"
        "# generic names (the pmpi_x_f08_ symbols exist), MPI_Status_f2f08 / f082f and the\n"
        "# other conversions, the _c large-count forms; MPI_SUBARRAYS_SUPPORTED is .FALSE.:\n"
        "# calls that keep a buffer reject non-contiguous sections (MPI_ERR_BUFFER).\n"
        + "".join(f"{m}\n" for m in missing),
        root / "include/mpif.h": mpif(header),
        root / "include/mpi.f90": MODULE + f08_module(entries, header),
        root / "src/fortran/f08.rs": f08_rust(entries, header),
    }
    stale = [p for p, t in files.items() if not p.exists() or p.read_text() != t]
    if "--check" in sys.argv:
        for p in stale:
            print(f"{p} is stale: run tools/fortran_gen.py")
        sys.exit(1 if stale else 0)
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(files[p])


if __name__ == "__main__":
    main()
