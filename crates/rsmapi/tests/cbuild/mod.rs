//! The C-program tests' own settings of `myrix-ctest` (`c_programs.rs`, `c_netns.rs`):
//! programs compiled with the flags `pkg-config --cflags --libs rsmapi` gives from the
//! generated `.pc`, run without `LD_LIBRARY_PATH`.

#![allow(dead_code)]

use myrix_ctest::{CLib, Compiler};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

pub const CRATE: &str = env!("CARGO_MANIFEST_DIR");

pub const LIB: CLib = CLib::new("rsmapi", "rsmapi");

/// Compiles `src` (relative to the crate), once per test process.
pub fn build_c(src: &str, extra: &[&str]) -> PathBuf {
    Compiler::cc(Path::new(env!("CARGO_TARGET_TMPDIR")).join("rsmapi-c"))
        .flags(&["-std=c11", "-Wall", "-Wextra", "-Werror"])
        .flags(extra)
        .against(LIB)
        .build(&Path::new(CRATE).join(src))
}

/// Runs `exe` without LD_LIBRARY_PATH, killed after `limit`.
pub fn run(exe: &Path, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args(args).envs(env.iter().copied());
    myrix_ctest::run(cmd, limit)
}

/// Standard output and standard error, one after the other.
pub fn text(out: &Output) -> String {
    let (o, e) = myrix_ctest::text(out);
    o + &e
}
