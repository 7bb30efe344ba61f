//! Building and running C programs against the librsmapi cargo built, for the tests
//! (`c_programs.rs`, `c_netns.rs`): the flags come from `pkg-config --cflags --libs
//! rsmapi` on the generated `.pc`, and the programs run without `LD_LIBRARY_PATH`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub const CRATE: &str = env!("CARGO_MANIFEST_DIR");

/// The directory holding librsmapi.so and pkgconfig/rsmapi.pc: the profile directory
/// this test was built in (the build script says which).
///
/// `cargo test` builds only the rlib the tests link, so the shared library may be
/// missing or stale: build it once per run with the same target directory and
/// profile (a no-op when it is fresh).
pub fn lib_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = PathBuf::from(env!("RSMAPI_LIB_DIR"));
            let profile = match dir.file_name().and_then(|n| n.to_str()) {
                Some("debug") => "dev".to_string(),
                Some(p) => p.to_string(),
                None => panic!("odd library directory {}", dir.display()),
            };
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args([
                "build",
                "-p",
                "myrix-rsmapi",
                "--lib",
                "--profile",
                &profile,
            ]);
            // target/<profile>, or target/<triple>/<profile> when cross-compiling.
            let parent = dir.parent().unwrap();
            if parent.join("CACHEDIR.TAG").is_file() {
                cmd.arg("--target-dir").arg(parent);
            }
            let st = cmd.status().expect("running cargo build");
            assert!(st.success(), "cargo build -p myrix-rsmapi failed");
            for f in ["librsmapi.so", "pkgconfig/rsmapi.pc"] {
                assert!(dir.join(f).is_file(), "no {f} in {}", dir.display());
            }
            dir
        })
        .clone()
}

/// `pkg-config --cflags --libs rsmapi` against the generated .pc file.
pub fn pkg_config_flags() -> Vec<String> {
    let out = Command::new("pkg-config")
        .args(["--cflags", "--libs", "rsmapi"])
        .env("PKG_CONFIG_PATH", lib_dir().join("pkgconfig"))
        .output()
        .expect("pkg-config is needed (Debian package pkg-config)");
    assert!(
        out.status.success(),
        "pkg-config: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let flags: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert!(
        flags.iter().any(|f| f.starts_with("-Wl,-rpath,")),
        "{flags:?}"
    );
    assert!(flags.iter().any(|f| f == "-lrsmapi"), "{flags:?}");
    flags
}

/// Compiles `src` (relative to the crate) into the test's temporary directory, under
/// a name of this call's own: tests running at once may build the same source, and
/// one must never run the file another is still writing.
pub fn build_c(src: &str, extra: &[&str]) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let src = Path::new(CRATE).join(src);
    let name = format!(
        "{}-{}-{n}",
        src.file_stem().unwrap().to_string_lossy(),
        std::process::id()
    );
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let out = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
        .args(extra)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .args(pkg_config_flags())
        .output()
        .expect("a C compiler (cc) is needed");
    assert!(
        out.status.success(),
        "compiling {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Runs `exe` without LD_LIBRARY_PATH, killed after `limit`.
pub fn run(exe: &Path, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env_remove("LD_LIBRARY_PATH")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("running the C program");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().ok();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
