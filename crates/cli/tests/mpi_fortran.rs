//! Fortran MPI programs: `crates/mpiapi/tests/f/*.f90` built with `myrix mpifort`
//! (mpif.h, `use mpi` and `use mpi_f08`: the `f08_*` programs) and run under
//! `myrix mpiexec`; the wrapper's `-show` and
//! aliases; a function without a Fortran binding failing to link; the generated
//! files (`tools/fortran_gen.py --check`) matching `mpi.h`.
//!
//! Every test is skipped, saying so on standard error, when `gfortran` is not
//! installed: it is the only Fortran compiler the wrapper knows (`-J`,
//! `-fallow-argument-mismatch`). Build the library first (`cargo build -p
//! myrix-mpiapi`): cargo test does not refresh it.

mod common;

use common::mpi::{assert_every_rank, have, myrix, ranks_ok, run, show, MYRIX};
use myrix_ctest::{BuildError, Compiler};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn gfortran() -> bool {
    let ok = have("gfortran");
    if !ok {
        eprintln!("skipped: gfortran is not installed (apt-get install gfortran)");
    }
    ok
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpi-f");
    std::fs::create_dir_all(&dir).expect("output directory");
    dir
}

/// `myrix mpifort -O1` with the module cache under the test's target directory.
fn mpifort() -> Compiler {
    Compiler::command(MYRIX, &["mpifort"], out_dir())
        .env("MYRIX_MPI_MODCACHE", out_dir().join("modcache"))
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("PMI_JOBID")
        .flags(&["-O1"])
}

/// `crates/mpiapi/tests/f/<name>.f90`, built once per test process.
fn build(name: &str) -> PathBuf {
    mpifort().build(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../mpiapi/tests/f")
            .join(format!("{name}.f90")),
    )
}

/// Runs `<prog>` at each rank count: every rank prints "<prog> ok <rank>".
fn every_rank_ok(prog: &str, ranks: &[usize]) {
    ranks_ok(&build(prog), prog, ranks);
}

#[test]
fn point_to_point_with_statuses() {
    if gfortran() {
        every_rank_ok("p2p", &[2, 3]);
    }
}

#[test]
fn collectives_in_place() {
    if gfortran() {
        every_rank_ok("coll", &[1, 2, 3]);
    }
}

#[test]
fn derived_datatypes() {
    if gfortran() {
        every_rank_ok("dtype", &[2]);
    }
}

#[test]
fn strings_blank_padded() {
    if gfortran() {
        every_rank_ok("names", &[1, 2]);
    }
}

#[test]
fn error_codes_through_ierror() {
    if gfortran() {
        let exe = build("errors");
        let mut c = myrix();
        c.args(["mpiexec", "-n", "2"]).arg(&exe);
        let o = run(c, Duration::from_secs(60));
        assert_every_rank(&o, "errors", 2);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("MPI_ERR_RANK"),
            "{}",
            show(&o)
        );
    }
}

#[test]
fn f08_point_to_point_statuses_and_requests() {
    if gfortran() {
        every_rank_ok("f08_p2p", &[2, 3]);
    }
}

#[test]
fn f08_collectives_in_place_and_handle_operators() {
    if gfortran() {
        every_rank_ok("f08_coll", &[1, 2, 3]);
    }
}

#[test]
fn f08_derived_datatypes() {
    if gfortran() {
        every_rank_ok("f08_dtype", &[2]);
    }
}

#[test]
fn f08_errors_with_and_without_ierror() {
    if gfortran() {
        let exe = build("f08_errors");
        let mut c = myrix();
        c.args(["mpiexec", "-n", "2"]).arg(&exe);
        let o = run(c, Duration::from_secs(60));
        assert_every_rank(&o, "f08_errors", 2);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("MPI_ERR_RANK"),
            "{}",
            show(&o)
        );
    }
}

#[test]
fn show_and_aliases() {
    if !gfortran() {
        return;
    }
    let mut texts = Vec::new();
    for name in ["mpifort", "mpif77", "mpif90"] {
        let mut c = myrix();
        c.args([name, "-show", "x.f90", "-o", "x"])
            .env("MYRIX_MPI_MODCACHE", out_dir().join("modcache"));
        let o = run(c, Duration::from_secs(120));
        assert!(o.status.success(), "{name}: {}", show(&o));
        texts.push(String::from_utf8_lossy(&o.stdout).into_owned());
    }
    let t = &texts[0];
    assert!(
        t.starts_with("gfortran -fallow-argument-mismatch -I"),
        "{t}"
    );
    assert!(
        t.contains("/modcache/") && t.contains(" x.f90 -o x "),
        "{t}"
    );
    assert!(t.trim_end().ends_with("-lmpi_abi"), "{t}");
    // The module directory holds the compiled module.
    let moddir = t
        .split_whitespace()
        .find_map(|w| w.strip_prefix("-I").filter(|d| d.contains("/modcache/")))
        .expect("module directory");
    assert!(Path::new(moddir).join("mpi.mod").is_file(), "{t}");
    assert!(Path::new(moddir).join("mpi_f08.mod").is_file(), "{t}");
    assert_eq!(texts[1], texts[0]);
    assert_eq!(texts[2], texts[0]);
}

#[test]
fn functions_without_a_binding_do_not_link() {
    if !gfortran() {
        return;
    }
    // MPI_Op_create takes a callback, whose Fortran form this library lacks.
    let built = mpifort().build_text(
        "opcreate.f90",
        "program p\n  include 'mpif.h'\n  integer op, ierr\n  external f\n  \
         call MPI_INIT(ierr)\n  call MPI_OP_CREATE(f, .true., op, ierr)\n  \
         call MPI_FINALIZE(ierr)\nend program\n",
    );
    match built {
        Err(BuildError::Failed(text)) => assert!(
            text.contains("undefined reference to `mpi_op_create_'"),
            "{text}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn generated_files_are_current() {
    if !have("python3") {
        eprintln!("skipped: no python3 to run tools/fortran_gen.py --check");
        return;
    }
    let o = run(
        {
            let mut c = Command::new("python3");
            c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../mpiapi/tools/fortran_gen.py"))
                .arg("--check");
            c
        },
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", show(&o));
}
