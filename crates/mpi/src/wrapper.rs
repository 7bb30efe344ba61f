//! `myrix mpicc`: the C compiler command that builds a program against `mpi.h` and
//! `libmpi_abi.so`, with an rpath so the program runs without `LD_LIBRARY_PATH`.
//!
//! Where the header and the library are, in order:
//! 1. `MYRIX_MPI_INCLUDE` and `MYRIX_MPI_LIBDIR`;
//! 2. `pkgconfig/myrix-mpi.pc` next to the `myrix` executable (written by the
//!    library's build script): its `includedir` and `libdir`;
//! 3. `libmpi_abi.so` next to the executable or in its `deps/` directory (the newer).
//!
//! The compiler is `MYRIX_MPICC_CC`, else `CC`, else `cc` (for `myrix mpicxx`:
//! `MYRIX_MPICXX_CXX`, else `CXX`, else `c++`; for `myrix mpifort`:
//! `MYRIX_MPIFORT_FC`, else `FC`, else `gfortran`), split into words (`CC="ccache
//! cc"` works). `CC`/`CXX` is ignored when it names an MPI wrapper (a word ending in `mpicc`,
//! `mpicxx`, `mpic++`, `mpiCC`, or the `myrix` executable): autoconf exports `CC=<the wrapper>` to the commands it
//! runs, and following it would make the wrapper call itself.

use std::path::{Path, PathBuf};

/// The library's file name.
pub const LIBRARY: &str = "libmpi_abi.so";
/// The pkg-config name.
pub const PC_NAME: &str = "myrix-mpi";

/// Where `mpi.h` and `libmpi_abi.so` are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locations {
    pub include: PathBuf,
    pub libdir: PathBuf,
}

/// A variable of a `.pc` file.
fn pc_var(text: &str, name: &str) -> Option<PathBuf> {
    text.lines().find_map(|l| {
        let v = l.strip_prefix(name)?.strip_prefix('=')?;
        Some(PathBuf::from(v.trim().trim_matches('"')))
    })
}

fn modified(p: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Finds the header and library for an executable in `exe_dir`.
pub fn locate(exe_dir: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Locations, String> {
    let pc = std::fs::read_to_string(exe_dir.join("pkgconfig").join(format!("{PC_NAME}.pc")))
        .unwrap_or_default();
    let include = env("MYRIX_MPI_INCLUDE")
        .map(PathBuf::from)
        .or_else(|| pc_var(&pc, "includedir"));
    let libdir = env("MYRIX_MPI_LIBDIR").map(PathBuf::from).or_else(|| {
        // The newest copy wins: `cargo test` relinks deps/ only.
        let candidates = [
            pc_var(&pc, "libdir"),
            Some(exe_dir.to_path_buf()),
            Some(exe_dir.join("deps")),
        ];
        candidates
            .into_iter()
            .flatten()
            .filter_map(|d| modified(&d.join(LIBRARY)).map(|t| (t, d)))
            .max_by_key(|(t, _)| *t)
            .map(|(_, d)| d)
    });
    match (include, libdir) {
        (Some(include), Some(libdir)) => Ok(Locations { include, libdir }),
        (None, _) => Err(format!(
            "cannot find mpi.h: no {} next to {} and MYRIX_MPI_INCLUDE is unset \
             (build the library: cargo build -p myrix-mpiapi)",
            Path::new("pkgconfig")
                .join(format!("{PC_NAME}.pc"))
                .display(),
            exe_dir.display()
        )),
        (_, None) => Err(format!(
            "cannot find {LIBRARY} near {} and MYRIX_MPI_LIBDIR is unset \
             (build it: cargo build -p myrix-mpiapi)",
            exe_dir.display()
        )),
    }
}

/// Whether the arguments only compile or preprocess (no link flags then).
fn compile_only(args: &[String]) -> bool {
    args.iter()
        .any(|a| matches!(a.as_str(), "-c" | "-E" | "-S" | "-M" | "-MM"))
}

/// The compiler command line (program first) for the user's `args`.
pub fn command_line(cc: &[String], loc: &Locations, args: &[String]) -> Vec<String> {
    let mut v = cc.to_vec();
    v.push(format!("-I{}", loc.include.display()));
    v.extend(args.iter().cloned());
    if !compile_only(args) {
        let l = loc.libdir.display();
        v.push(format!("-L{l}"));
        v.push(format!("-Wl,-rpath,{l}"));
        v.push("-lmpi_abi".to_string());
    }
    v
}

/// The language a wrapper compiles: `myrix mpicc` (C), `myrix mpicxx` (C++) or
/// `myrix mpifort` (Fortran, also `mpif77`, `mpif90`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    C,
    Cxx,
    Fortran,
}

impl Lang {
    /// `(myrix's variable, the build systems' variable, the default compiler)`.
    fn vars(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Lang::C => ("MYRIX_MPICC_CC", "CC", "cc"),
            Lang::Cxx => ("MYRIX_MPICXX_CXX", "CXX", "c++"),
            Lang::Fortran => ("MYRIX_MPIFORT_FC", "FC", "gfortran"),
        }
    }
}

/// The compiler to use, as words (program first).
pub fn compiler(env: &dyn Fn(&str) -> Option<String>, lang: Lang) -> Vec<String> {
    let (mine, theirs, default) = lang.vars();
    let words = |c: String| -> Vec<String> { c.split_whitespace().map(str::to_string).collect() };
    let is_wrapper = |w: &Vec<String>| {
        w.iter().any(|x| {
            let name = Path::new(x)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or(x);
            [
                "mpicc", "mpicxx", "mpic++", "mpiCC", "mpifort", "mpif77", "mpif90",
            ]
            .iter()
            .any(|m| name.ends_with(m))
                || name == "myrix"
        })
    };
    env(mine)
        .map(words)
        .filter(|w| !w.is_empty())
        .or_else(|| {
            env(theirs)
                .map(words)
                .filter(|w| !w.is_empty() && !is_wrapper(w))
        })
        .unwrap_or_else(|| vec![default.to_string()])
}

/// A command line for printing: words with spaces or quotes are single-quoted.
pub fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=,+:@%".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where the `mpi` module (`mpi.mod`) compiled by `fc` from `include/mpi.f90` is,
/// compiling it first if no cached copy exists. A `.mod` file is only readable by
/// the compiler version that wrote it, so the cache directory is named by a hash of
/// `fc --version` and of `mpif.h`/`mpi.f90`: under `MYRIX_MPI_MODCACHE`, else
/// `$XDG_CACHE_HOME/myrix/mpi-mod`, else `$HOME/.cache/myrix/mpi-mod`. The module is
/// compiled into a fresh directory renamed into place, so concurrent first uses
/// do not see a half-written file. The `-J` option is gfortran's.
pub fn fortran_module(
    fc: &[String],
    include: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    let root = env("MYRIX_MPI_MODCACHE")
        .map(PathBuf::from)
        .or_else(|| env("XDG_CACHE_HOME").map(|d| Path::new(&d).join("myrix/mpi-mod")))
        .or_else(|| env("HOME").map(|d| Path::new(&d).join(".cache/myrix/mpi-mod")))
        .ok_or("no cache directory for the mpi module: set MYRIX_MPI_MODCACHE")?;
    let version = std::process::Command::new(&fc[0])
        .args(&fc[1..])
        .arg("--version")
        .output()
        .map_err(|e| format!("running {} --version: {e}", fc[0]))?;
    let source = include.join("mpi.f90");
    let mut h = std::collections::hash_map::DefaultHasher::new();
    fc.hash(&mut h);
    version.stdout.hash(&mut h);
    for f in [source.clone(), include.join("mpif.h")] {
        std::fs::read(&f)
            .map_err(|e| format!("reading {}: {e}", f.display()))?
            .hash(&mut h);
    }
    let dir = root.join(format!("{:016x}", h.finish()));
    if dir.join("mpi.mod").is_file() {
        return Ok(dir);
    }
    let tmp = root.join(format!("tmp.{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| format!("creating {}: {e}", tmp.display()))?;
    let status = std::process::Command::new(&fc[0])
        .args(&fc[1..])
        .arg(format!("-I{}", include.display()))
        .arg("-J")
        .arg(&tmp)
        .arg("-c")
        .arg(&source)
        .arg("-o")
        .arg(tmp.join("mpi.o"))
        .status()
        .map_err(|e| format!("running {}: {e}", fc[0]))?;
    if !status.success() || !tmp.join("mpi.mod").is_file() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(format!("{} could not compile {}", fc[0], source.display()));
    }
    // Another process may have won the race: its copy is as good as ours.
    if std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if dir.join("mpi.mod").is_file() {
        Ok(dir)
    } else {
        Err(format!("cannot place the mpi module in {}", dir.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_flags_only_when_linking() {
        let loc = Locations {
            include: "/i".into(),
            libdir: "/l".into(),
        };
        let a = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            command_line(&a(&["cc"]), &loc, &a(&["p.c", "-o", "p"])).join(" "),
            "cc -I/i p.c -o p -L/l -Wl,-rpath,/l -lmpi_abi"
        );
        assert_eq!(
            command_line(&a(&["cc"]), &loc, &a(&["-c", "p.c"])).join(" "),
            "cc -I/i -c p.c"
        );
        assert_eq!(shell_words(&a(&["a b", "c"])), "'a b' c");
    }

    #[test]
    fn the_compiler_never_the_wrapper_itself() {
        let with = |cc: Option<&'static str>, mine: Option<&'static str>| {
            compiler(
                &move |k: &str| match k {
                    "CC" => cc.map(str::to_string),
                    "MYRIX_MPICC_CC" => mine.map(str::to_string),
                    _ => None,
                },
                Lang::C,
            )
            .join(" ")
        };
        assert_eq!(with(None, None), "cc");
        assert_eq!(with(Some("gcc-12"), None), "gcc-12");
        assert_eq!(with(Some("ccache  cc"), None), "ccache cc");
        // autoconf exports CC=<the wrapper> to what it runs
        assert_eq!(with(Some("/opt/target/release/myrix mpicc"), None), "cc");
        assert_eq!(with(Some("mpicc"), None), "cc");
        assert_eq!(with(Some("/usr/bin/mpicc"), Some("clang")), "clang");
        assert_eq!(with(Some("  "), None), "cc");
        let cxx = |k: &str| (k == "CXX").then(|| "mpicxx".to_string());
        assert_eq!(compiler(&cxx, Lang::Cxx).join(" "), "c++");
        let cxx = |k: &str| (k == "CXX").then(|| "g++-12".to_string());
        assert_eq!(compiler(&cxx, Lang::Cxx).join(" "), "g++-12");
        let fc = |k: &str| (k == "FC").then(|| "/x/bin/mpif90".to_string());
        assert_eq!(compiler(&fc, Lang::Fortran).join(" "), "gfortran");
        let fc = |k: &str| (k == "FC").then(|| "gfortran-12".to_string());
        assert_eq!(compiler(&fc, Lang::Fortran).join(" "), "gfortran-12");
    }

    #[test]
    fn env_overrides() {
        let env = |k: &str| match k {
            "MYRIX_MPI_INCLUDE" => Some("/x/include".to_string()),
            "MYRIX_MPI_LIBDIR" => Some("/x/lib".to_string()),
            _ => None,
        };
        let loc = locate(Path::new("/nonexistent"), &env).unwrap();
        assert_eq!(loc.libdir, PathBuf::from("/x/lib"));
        assert!(locate(Path::new("/nonexistent"), &|_| None).is_err());
    }
}
