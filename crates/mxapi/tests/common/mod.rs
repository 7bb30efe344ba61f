//! The C-program tests' own settings of `myrix-ctest`: `tests/c/<name>.c` compiled
//! against the generated `myriexpress.pc`, and run without `LD_LIBRARY_PATH` or the
//! variables that change MX's error handling.
#![allow(dead_code)]

use myrix_ctest::{CLib, Compiler};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const LIB: CLib = CLib::new("myriexpress", "myriexpress");

/// `tests/c/<name>.c`, built once per test process.
pub fn build(name: &str) -> PathBuf {
    Compiler::cc(Path::new(env!("CARGO_TARGET_TMPDIR")).join("mxapi-c"))
        .flags(&[
            "-std=c11",
            "-D_DEFAULT_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O1",
        ])
        .against(LIB)
        .build(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c")))
}

/// The `libmyriexpress.so` the programs `build` compiles are linked with.
pub fn library() -> PathBuf {
    LIB.path()
}

/// A command for a test program, without `LD_LIBRARY_PATH`.
pub fn program(exe: &Path) -> Command {
    let mut c = Command::new(exe);
    c.env_remove("LD_LIBRARY_PATH")
        .env_remove("MX_ERRORS_ARE_FATAL")
        .env_remove("OMX_FATAL_ERRORS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}
