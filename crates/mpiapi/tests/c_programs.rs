//! C programs against `mpi.h` and `libmpi_abi.so` (flags from the generated
//! `myrix-mpi.pc`, no LD_LIBRARY_PATH): the ABI's sizes and values, every declared
//! function exported (as MPI_ and PMPI_), and a singleton run. The launchers are
//! tested in `crates/cli/tests/mpi_launch.rs`. Needs `cc`, `pkg-config` and `nm`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// The library cargo built last: `target/<profile>` or its `deps/`.
fn library_dir() -> PathBuf {
    let p = profile_dir();
    let modified = |d: &Path| {
        std::fs::metadata(d.join("libmpi_abi.so"))
            .and_then(|m| m.modified())
            .ok()
    };
    let deps = p.join("deps");
    match (modified(&p), modified(&deps)) {
        (up, Some(d)) if Some(d) > up => deps,
        (Some(_), _) => p,
        _ => panic!("libmpi_abi.so was not built in {}", p.display()),
    }
}

fn build(name: &str) -> PathBuf {
    let pc = profile_dir().join("pkgconfig");
    let flags = Command::new("pkg-config")
        .env("PKG_CONFIG_PATH", &pc)
        .arg(format!(
            "--define-variable=libdir={}",
            library_dir().display()
        ))
        .args(["--cflags", "--libs", "myrix-mpi"])
        .output()
        .expect("pkg-config must be installed (Debian: apt-get install pkg-config)");
    assert!(
        flags.status.success(),
        "pkg-config cannot find myrix-mpi in {}: {}",
        pc.display(),
        String::from_utf8_lossy(&flags.stderr)
    );
    let flags = String::from_utf8(flags.stdout).expect("utf-8 flags");
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{name}.c"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpiapi-c");
    std::fs::create_dir_all(&dir).expect("output directory");
    let exe = dir.join(name);
    let out = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(flags.split_whitespace())
        .output()
        .expect("running cc");
    assert!(
        out.status.success(),
        "compiling {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

fn run(exe: &Path, args: &[&str]) -> std::process::Output {
    Command::new(exe)
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("PMI_JOBID")
        .output()
        .expect("running the program")
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
        .arg(library_dir().join("libmpi_abi.so"))
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
