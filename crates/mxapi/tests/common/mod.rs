//! Helpers of the C-program tests: compiling `tests/c/*.c` against the generated
//! `myriexpress.pc`, and running the programs without `LD_LIBRARY_PATH`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `target/<profile>`: where cargo put `libmyriexpress.so` and `pkgconfig/`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/c_programs-<hash>
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// Compiles `tests/c/<name>.c` once per test run; returns the executable.
pub fn build(name: &str) -> PathBuf {
    let profile = profile_dir();
    let pc = profile.join("pkgconfig");
    let mut pkg_config = Command::new("pkg-config");
    pkg_config.env("PKG_CONFIG_PATH", &pc);
    // `cargo build` puts the library in target/<profile>, where the .pc file points;
    // `cargo test` builds it in target/<profile>/deps only. The newer one is used (for
    // deps, by overriding the .pc file's libdir, which also moves the rpath).
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let uplifted = modified(&profile.join("libmyriexpress.so"));
    let deps = profile.join("deps");
    let built = modified(&deps.join("libmyriexpress.so"));
    assert!(
        uplifted.is_some() || built.is_some(),
        "libmyriexpress.so was not built in {}",
        profile.display()
    );
    if built > uplifted {
        pkg_config.arg(format!("--define-variable=libdir={}", deps.display()));
    }
    let flags = pkg_config
        .args(["--cflags", "--libs", "myriexpress"])
        .output()
        .expect("pkg-config must be installed (Debian: apt-get install pkg-config)");
    assert!(
        flags.status.success(),
        "pkg-config cannot find myriexpress in {}: {}",
        pc.display(),
        String::from_utf8_lossy(&flags.stderr)
    );
    let flags = String::from_utf8(flags.stdout).expect("utf-8 flags");
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{name}.c"));
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mxapi-c");
    std::fs::create_dir_all(&out_dir).expect("output directory");
    let exe = out_dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .args([
            "-std=c11",
            "-D_DEFAULT_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O1",
            "-o",
        ])
        .arg(&exe)
        .arg(&src)
        .args(flags.split_whitespace())
        .output()
        .unwrap_or_else(|e| panic!("running {cc}: {e}"));
    assert!(
        out.status.success(),
        "compiling {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// The `libmyriexpress.so` the programs `build` compiles are linked with: the newer of
/// `target/<profile>/` (`cargo build`) and `target/<profile>/deps/` (`cargo test`).
pub fn library() -> PathBuf {
    let profile = profile_dir();
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let (up, deps) = (
        profile.join("libmyriexpress.so"),
        profile.join("deps/libmyriexpress.so"),
    );
    if modified(&deps) > modified(&up) {
        deps
    } else {
        up
    }
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

/// Runs to completion within `limit` (killed after it).
pub fn run(mut c: Command, limit: Duration) -> Output {
    let mut child = c.spawn().expect("spawning the test program");
    let end = Instant::now() + limit;
    while child.try_wait().expect("waiting").is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("output")
}

pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}
