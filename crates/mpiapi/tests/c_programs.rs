//! C programs against `mpi.h` and `libmpi_abi.so` (flags from the generated
//! `myrix-mpi.pc`, no LD_LIBRARY_PATH): the ABI's sizes and values, every declared
//! function exported (as MPI_ and PMPI_), and a singleton run. The launchers are
//! tested in `crates/cli/tests/mpi_launch.rs`. Needs `cc`, `pkg-config` and `nm`.

use myrix_ctest::{CLib, Compiler};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LIB: CLib = CLib::new("mpi_abi", "myrix-mpi");

/// `tests/c/<name>.c`, built once per test process.
fn build(name: &str) -> PathBuf {
    Compiler::cc(Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpiapi-c"))
        .flags(&["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"])
        .against(LIB)
        .build(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c")))
}

/// A singleton run (no launcher's variables), at most two minutes.
fn run(exe: &Path, args: &[&str]) -> std::process::Output {
    let mut c = Command::new(exe);
    c.args(args)
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("PMI_JOBID");
    myrix_ctest::run(c, Duration::from_secs(120))
}

#[test]
fn abi_sizes_and_values() {
    let o = run(&build("abi"), &[]);
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn fortran_type_registration() {
    let o = run(&build("abi_fortran"), &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("abi_fortran ok"),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn singleton_hello() {
    let exe = build("hello");
    let o = run(&exe, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("rank 0 of 1 on "), "{out}");
    assert_eq!(run(&exe, &["abort"]).status.code(), Some(7));
}

#[test]
fn every_declared_function_is_exported() {
    let header =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/mpi.h"))
            .expect("mpi.h");
    let declared: Vec<String> = header
        .lines()
        .filter(|l| !l.starts_with("typedef") && l.trim_end().ends_with(");"))
        .filter_map(|l| {
            let head = &l[..l.find('(')?];
            let name = head
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()?;
            (name.starts_with("MPI_") || name.starts_with("PMPI_")).then(|| name.to_string())
        })
        .collect();
    assert!(
        declared.len() > 1200,
        "only {} prototypes found",
        declared.len()
    );
    let nm = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(LIB.path())
        .output()
        .expect("nm (binutils)");
    let syms = String::from_utf8_lossy(&nm.stdout);
    let exported: std::collections::HashSet<&str> = syms
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    let missing: Vec<&String> = declared
        .iter()
        .filter(|n| !exported.contains(n.as_str()))
        .collect();
    assert!(missing.is_empty(), "declared but not exported: {missing:?}");
}

#[test]
fn datatypes_pack_and_refusals() {
    let o = run(&build("datatype"), &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("datatype ok"),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn singleton_collectives_communicators_and_groups() {
    let o = run(&build("coll"), &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "exit {:?}\n{out}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("coll ok"), "{out}");
}

/// `readelf -d` of a file.
fn dynamic_section(file: &Path) -> String {
    let o = Command::new("readelf")
        .arg("-d")
        .arg(file)
        .output()
        .expect("readelf (binutils)");
    assert!(o.status.success(), "readelf -d {}", file.display());
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The MPI-5.0 ABI's soname: the library is `libmpi_abi.so.1`, a program linked with
/// `-lmpi_abi` needs that name, and one linked by that very name (as a program built
/// against another implementation's ABI library is) runs on this library.
#[test]
fn the_abi_soname_is_needed_and_loads() {
    let lib = LIB.path();
    let d = dynamic_section(&lib);
    assert!(d.contains("Library soname: [libmpi_abi.so.1]"), "{d}");
    let d = dynamic_section(&build("hello"));
    assert!(d.contains("Shared library: [libmpi_abi.so.1]"), "{d}");

    let libdir = lib.parent().expect("the library's directory");
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpiapi-c-soname");
    std::fs::create_dir_all(&out).expect("output directory");
    let exe = out.join(format!("hello-{}", std::process::id()));
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let o = Command::new(cc)
        .arg("-std=c11")
        .arg(format!("-I{}", crate_dir.join("include").display()))
        .arg(crate_dir.join("tests/c/hello.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", libdir.display()))
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-l:libmpi_abi.so.1")
        .output()
        .expect("cc");
    assert!(o.status.success(), "{}", myrix_ctest::show(&o));
    let r = run(&exe, &[]);
    let _ = std::fs::remove_file(&exe);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        r.status.success() && text.contains("rank 0 of 1 on "),
        "{}",
        myrix_ctest::show(&r)
    );
}
