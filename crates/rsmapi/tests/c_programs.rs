//! Builds the C programs (tests/c/*.c, examples/c/rsm_hello.c) against the librsmapi
//! cargo just built, with the flags `pkg-config --cflags --libs rsmapi` gives from
//! the generated `.pc`, runs them without `LD_LIBRARY_PATH`, and checks what they say.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use myrix_rsm::RsmError;
use rsmapi::barrier::rsmapi_barrier_t;
use rsmapi::controller::{rsmapi_controller_attr_t, TOPOLOGY_SIZES};
use rsmapi::export::rsmapi_access_entry_t;
use rsmapi::sgio::{rsm_iovec_t, rsm_scat_gath_t};

const CRATE: &str = env!("CARGO_MANIFEST_DIR");

/// The directory holding librsmapi.so and pkgconfig/rsmapi.pc: the profile directory
/// this test was built in (the build script says which).
///
/// `cargo test` builds only the rlib the tests link, so the shared library may be
/// missing or stale: build it once per run with the same target directory and
/// profile (a no-op when it is fresh).
fn lib_dir() -> PathBuf {
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
fn pkg_config_flags() -> Vec<String> {
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

/// Compiles `src` (relative to the crate) into the test's temporary directory.
fn build_c(src: &str, extra: &[&str]) -> PathBuf {
    let src = Path::new(CRATE).join(src);
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(src.file_stem().unwrap());
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
fn run(exe: &Path, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Output {
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

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn header_constants_and_layouts_match_rsmapi_and_the_library() {
    let exe = build_c("tests/c/constants.c", &["-pedantic"]);
    let out = run(&exe, &[], &[], Duration::from_secs(10));
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for line in stdout.lines() {
        let (k, v) = line.rsplit_once(' ').unwrap();
        seen.insert(k.to_string(), v.parse().unwrap());
    }
    for e in RsmError::ALL {
        assert_eq!(
            seen.get(e.name()),
            Some(&(e.code() as usize)),
            "{}",
            e.name()
        );
    }
    use std::mem::{offset_of, size_of};
    let want: Vec<(&str, usize)> = vec![
        (
            "sizeof rsmapi_controller_attr_t",
            size_of::<rsmapi_controller_attr_t>(),
        ),
        (
            "offsetof rsmapi_controller_attr_t.attr_atomic_sizes",
            offset_of!(rsmapi_controller_attr_t, attr_atomic_sizes),
        ),
        (
            "offsetof rsmapi_controller_attr_t.attr_page_size",
            offset_of!(rsmapi_controller_attr_t, attr_page_size),
        ),
        (
            "offsetof rsmapi_controller_attr_t.attr_max_export_segments",
            offset_of!(rsmapi_controller_attr_t, attr_max_export_segments),
        ),
        (
            "offsetof rsmapi_controller_attr_t.attr_max_import_segments",
            offset_of!(rsmapi_controller_attr_t, attr_max_import_segments),
        ),
        (
            "sizeof rsmapi_access_entry_t",
            size_of::<rsmapi_access_entry_t>(),
        ),
        (
            "offsetof rsmapi_access_entry_t.ae_permission",
            offset_of!(rsmapi_access_entry_t, ae_permission),
        ),
        ("sizeof rsmapi_barrier_t", size_of::<rsmapi_barrier_t>()),
        (
            "offsetof rsmapi_barrier_t.gnum",
            offset_of!(rsmapi_barrier_t, gnum),
        ),
        (
            "offsetof rsmapi_barrier_t.privdata",
            offset_of!(rsmapi_barrier_t, privdata),
        ),
        ("sizeof rsm_iovec_t", size_of::<rsm_iovec_t>()),
        ("offsetof rsm_iovec_t.local", offset_of!(rsm_iovec_t, local)),
        (
            "offsetof rsm_iovec_t.local_offset",
            offset_of!(rsm_iovec_t, local_offset),
        ),
        (
            "offsetof rsm_iovec_t.transfer_length",
            offset_of!(rsm_iovec_t, transfer_length),
        ),
        ("sizeof rsm_scat_gath_t", size_of::<rsm_scat_gath_t>()),
        (
            "offsetof rsm_scat_gath_t.io_request_count",
            offset_of!(rsm_scat_gath_t, io_request_count),
        ),
        (
            "offsetof rsm_scat_gath_t.flags",
            offset_of!(rsm_scat_gath_t, flags),
        ),
        (
            "offsetof rsm_scat_gath_t.remote_handle",
            offset_of!(rsm_scat_gath_t, remote_handle),
        ),
        (
            "offsetof rsm_scat_gath_t.iovec",
            offset_of!(rsm_scat_gath_t, iovec),
        ),
        ("offsetof rsm_topology_t.connections", 8),
        ("sizeof rsm_barrier_mode_t", 4),
        ("sizeof rsm_attribute_t", 4),
        ("sizeof rsm_barrier_type_t", 4),
        ("sizeof rsm_memseg_import_handle_t", size_of::<usize>()),
    ];
    for (k, v) in want {
        assert_eq!(seen.get(k), Some(&v), "{k}");
    }
    for (name, size) in TOPOLOGY_SIZES {
        assert_eq!(seen.get(&format!("sizeof {name}")), Some(&size), "{name}");
    }
    assert_eq!(
        seen.get("offsetof rsm_connections_t.remote_cntlr"),
        seen.get("sizeof rsm_connections_hdr_t")
    );
}

#[test]
fn the_header_compiles_as_c99_c17_and_cxx() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("include_only.c");
    std::fs::write(
        &src,
        "#include <rsmapi.h>\nint main(void) { return RSM_SUCCESS; }\n",
    )
    .unwrap();
    let inc = format!("-I{CRATE}/include");
    for (compiler, std) in [("cc", "-std=c99"), ("cc", "-std=gnu99"), ("cc", "-std=c17")] {
        let st = Command::new(compiler)
            .args([std, "-Wall", "-Wextra", "-pedantic", "-Werror", "-c", &inc])
            .arg(&src)
            .arg("-o")
            .arg(dir.join("include_only.o"))
            .status()
            .unwrap();
        assert!(st.success(), "{compiler} {std}");
    }
    if Command::new("c++").arg("--version").output().is_ok() {
        let st = Command::new("c++")
            .args(["-x", "c++", "-Wall", "-pedantic", "-Werror", "-c", &inc])
            .arg(&src)
            .arg("-o")
            .arg(dir.join("include_only_cxx.o"))
            .status()
            .unwrap();
        assert!(st.success(), "c++");
    }
}

#[test]
fn bad_arguments_from_c_get_rsmapi_errors() {
    let exe = build_c("tests/c/errors.c", &[]);
    let conf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rsm.segmentid");
    std::fs::write(
        &conf,
        "# test reservations\nreserve other 0x80000100 16\nreserve myrix-test 0x80001000 64\n",
    )
    .unwrap();
    let out = run(
        &exe,
        &[],
        &[("MYRIX_RSM_SEGMENTID_FILE", conf.to_str().unwrap())],
        Duration::from_secs(60),
    );
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains(", 0 failed"), "{t}");
    assert!(t.contains("topology: node "), "{t}");
}

#[test]
fn the_example_exports_imports_and_signals_between_two_processes() {
    let exe = build_c("examples/c/rsm_hello.c", &["-pedantic"]);
    for ctlr in ["loopback", "shm"] {
        let out = run(&exe, &[ctlr], &[], Duration::from_secs(60));
        let t = text(&out);
        assert!(out.status.success(), "{ctlr}:\n{t}");
        for want in [
            "exporter: published 4096 bytes as segment 0x",
            "importer: connected to segment 0x",
            "importer: put 24 bytes and 4 words, barrier closed",
            "exporter: signalled; segment holds \"hello from the importer\" and 1 2 3 4",
            "importer: got \"hello back from the exporter\"",
            "rsm_hello: done",
        ] {
            assert!(t.contains(want), "{ctlr}: no {want:?} in:\n{t}");
        }
    }
}
