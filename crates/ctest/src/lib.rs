//! The one helper the tests of myrix's C interfaces share (a dev-dependency of
//! `rsmapi`, `mxapi`, `mpiapi`, `mpi` and `cli`): find the C library cargo built and its
//! pkg-config flags, compile a C (or Fortran) program once per test process, run it
//! under a time limit and show what it printed.
//!
//! ```no_run
//! use myrix_ctest::{run, show, CLib, Compiler};
//! use std::{path::Path, process::Command, time::Duration};
//!
//! const LIB: CLib = CLib::new("myriexpress", "myriexpress");
//! // An integration test would write under env!("CARGO_TARGET_TMPDIR").
//! let exe = Compiler::cc("target/tmp/mxapi-c")
//!     .flags(&["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"])
//!     .against(LIB)
//!     .build(Path::new("crates/mxapi/tests/c/abi.c"));
//! let out = run(Command::new(&exe), Duration::from_secs(60));
//! assert!(out.status.success(), "{}", show(&out));
//! ```
//!
//! # Which copy of the library
//!
//! `cargo build` puts `lib<name>.so` in `target/<profile>`, where the `.pc` file that
//! `myrix-capi-build` writes points; `cargo test` relinks only the copy in
//! `target/<profile>/deps`. [`CLib`] takes the newer of the two and passes pkg-config
//! `--define-variable=libdir=<its directory>`, which moves the `-L` and the rpath with
//! it (`myrix mpicc` makes the same choice, `mpi::wrapper`). For the same reason
//! [`run`] takes cargo's `LD_LIBRARY_PATH` away: it names `target/<profile>`, whose copy
//! may be the older one.
//!
//! # Once per process, never half written
//!
//! Tests of one binary run in parallel and may ask for the same program: each output
//! path is compiled once per process, the others wait for it. The compiler writes a
//! name of its own (`<exe>.<pid>.tmp`) renamed onto the output, so a second test binary
//! building the same program never overwrites a file one is still running or writing.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `target/<profile>`: a test executable is `target/<profile>/deps/<test>-<hash>`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// A C library of myrix: the file `lib<file>.so` and its pkg-config name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CLib {
    /// The `[lib] name`: the library is `lib<file>.so`.
    pub file: &'static str,
    /// The `.pc` file's name (`pkgconfig/<pc>.pc`).
    pub pc: &'static str,
}

impl CLib {
    pub const fn new(file: &'static str, pc: &'static str) -> CLib {
        CLib { file, pc }
    }

    /// The newer of `target/<profile>/lib<file>.so` and the one in `deps/`.
    pub fn path(&self) -> PathBuf {
        let profile = profile_dir();
        let so = format!("lib{}.so", self.file);
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let (up, deps) = (profile.join(&so), profile.join("deps").join(&so));
        match (modified(&up), modified(&deps)) {
            (u, Some(d)) if Some(d) > u => deps,
            (Some(_), _) => up,
            _ => panic!("{so} was not built in {}", profile.display()),
        }
    }

    /// `pkg-config --cflags --libs <pc>` from `target/<profile>/pkgconfig`, the library
    /// directory pointed at [`CLib::path`]'s; checked to carry the rpath and `-l<file>`.
    pub fn flags(&self) -> Vec<String> {
        let pc = profile_dir().join("pkgconfig");
        let lib = self.path();
        let libdir = lib.parent().expect("the library's directory");
        let out = Command::new("pkg-config")
            .env("PKG_CONFIG_PATH", &pc)
            .arg(format!("--define-variable=libdir={}", libdir.display()))
            .args(["--cflags", "--libs", self.pc])
            .output()
            .expect("pkg-config must be installed (Debian: apt-get install pkg-config)");
        assert!(
            out.status.success(),
            "pkg-config cannot find {} in {}: {}",
            self.pc,
            pc.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let flags: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let lflag = format!("-l{}", self.file);
        assert!(
            flags.iter().any(|f| f.starts_with("-Wl,-rpath,")) && flags.contains(&lflag),
            "{}.pc gives no rpath or no {lflag}: {flags:?}",
            self.pc
        );
        flags
    }
}

/// Why a program was not built.
#[derive(Debug)]
pub enum BuildError {
    /// The compiler could not be started (not installed).
    NoCompiler(String),
    /// It ran and failed: what [`show`] says of its run.
    Failed(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::NoCompiler(e) => write!(f, "no compiler: {e}"),
            BuildError::Failed(e) => write!(f, "compiling failed: {e}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// How programs are compiled: a compiler command (`$CC`, `cc`, or a wrapper such as
/// `myrix mpicc`), its flags, perhaps a library's pkg-config flags, and the directory
/// the executables go to. The command line is
/// `<compiler> <args> <flags> <source> -o <exe> <library flags>`.
#[derive(Debug, Clone)]
pub struct Compiler {
    program: OsString,
    args: Vec<OsString>,
    flags: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    lib: Option<CLib>,
    out_dir: PathBuf,
    limit: Duration,
}

impl Compiler {
    /// `$CC` (default `cc`).
    pub fn cc(out_dir: impl Into<PathBuf>) -> Compiler {
        let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
        Compiler::command(cc, &[], out_dir)
    }

    /// `program args…`: a wrapper (`myrix mpicc`, `myrix mpifort`).
    pub fn command(
        program: impl AsRef<OsStr>,
        args: &[&str],
        out_dir: impl Into<PathBuf>,
    ) -> Compiler {
        Compiler {
            program: program.as_ref().to_owned(),
            args: args.iter().map(OsString::from).collect(),
            flags: Vec::new(),
            env: Vec::new(),
            lib: None,
            out_dir: out_dir.into(),
            limit: Duration::from_secs(180),
        }
    }

    /// Flags before the source.
    pub fn flags(mut self, flags: &[&str]) -> Compiler {
        self.flags.extend(flags.iter().map(OsString::from));
        self
    }

    /// An environment variable of the compiler's run.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Compiler {
        self.env.push((key.into(), Some(value.as_ref().to_owned())));
        self
    }

    /// An environment variable the compiler's run goes without.
    pub fn env_remove(mut self, key: &str) -> Compiler {
        self.env.push((key.into(), None));
        self
    }

    /// Compile and link against `lib` ([`CLib::flags`], after the source).
    pub fn against(mut self, lib: CLib) -> Compiler {
        self.lib = Some(lib);
        self
    }

    /// The directory the executables go to.
    pub fn out_dir(&self) -> &Path {
        &self.out_dir
    }

    /// `src` compiled to `<out dir>/<its stem>`; panics with the compiler's output.
    pub fn build(&self, src: &Path) -> PathBuf {
        self.try_build(src)
            .unwrap_or_else(|e| panic!("{}: {e}", src.display()))
    }

    /// `text` written to `<out dir>/<name>.c` (or whatever `name` ends in) and built.
    pub fn build_text(&self, name: &str, text: &str) -> Result<PathBuf, BuildError> {
        std::fs::create_dir_all(&self.out_dir).expect("output directory");
        let src = self.out_dir.join(name);
        std::fs::write(&src, text).expect("writing the program");
        self.try_build(&src)
    }

    /// `src` compiled to `<out dir>/<its stem>`, once per process for each output: a
    /// second call for the same output waits for the first and takes its executable
    /// (asking for it with another command line is a mistake of the test, a panic).
    pub fn try_build(&self, src: &Path) -> Result<PathBuf, BuildError> {
        type Slot = Arc<Mutex<Option<Vec<OsString>>>>;
        static BUILT: Mutex<Option<HashMap<PathBuf, Slot>>> = Mutex::new(None);
        let stem = src.file_stem().expect("a source file name");
        let exe = self.out_dir.join(stem);
        let line = self.line(src);
        let slot: Slot = {
            let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
            built
                .get_or_insert_with(HashMap::new)
                .entry(exe.clone())
                .or_default()
                .clone()
        };
        // Held while compiling: a second test asking for it waits here.
        let mut done = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(first) = done.as_ref() {
            assert!(
                *first == line,
                "{} built twice with different command lines:\n{first:?}\n{line:?}",
                exe.display()
            );
            return Ok(exe);
        }
        self.compile(src, &exe)?;
        *done = Some(line);
        Ok(exe)
    }

    /// What identifies a build: the command line without the output.
    fn line(&self, src: &Path) -> Vec<OsString> {
        let mut line = vec![self.program.clone()];
        line.extend(self.args.iter().cloned());
        line.extend(self.flags.iter().cloned());
        line.push(src.as_os_str().to_owned());
        line
    }

    fn compile(&self, src: &Path, exe: &Path) -> Result<(), BuildError> {
        std::fs::create_dir_all(&self.out_dir).expect("output directory");
        let mut tmp = exe.as_os_str().to_owned();
        tmp.push(format!(".{}.tmp", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let mut c = Command::new(&self.program);
        c.args(&self.args)
            .args(&self.flags)
            .arg(src)
            .arg("-o")
            .arg(&tmp);
        if let Some(lib) = self.lib {
            c.args(lib.flags());
        }
        for (k, v) in &self.env {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        let o = try_run(c, self.limit).map_err(|e| {
            BuildError::NoCompiler(format!("{}: {e}", self.program.to_string_lossy()))
        })?;
        if !o.status.success() {
            let _ = std::fs::remove_file(&tmp);
            return Err(BuildError::Failed(show(&o)));
        }
        std::fs::rename(&tmp, exe).expect("renaming the executable into place");
        Ok(())
    }
}

/// Runs `cmd` to its end, or kills it after `limit`; with stdin empty, its output
/// captured, and without cargo's `LD_LIBRARY_PATH` (see the crate documentation).
pub fn run(cmd: Command, limit: Duration) -> Output {
    try_run(cmd, limit).expect("spawning the program")
}

fn try_run(mut cmd: Command, limit: Duration) -> std::io::Result<Output> {
    cmd.env_remove("LD_LIBRARY_PATH")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let end = Instant::now() + limit;
    while child.try_wait()?.is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output()
}

/// A run's status, standard output and standard error, for a failed assertion.
pub fn show(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Standard output and standard error, as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Whether `cmd` is on the `PATH` (a launcher, a compiler).
pub fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}
