//! Builds the C programs (tests/c/*.c, examples/c/rsm_hello.c) against the librsmapi
//! cargo just built, with the flags `pkg-config --cflags --libs rsmapi` gives from
//! the generated `.pc`, runs them without `LD_LIBRARY_PATH`, and checks what they say.

mod cbuild;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use cbuild::{build_c, run, text, CRATE};

use myrix_rsm::RsmError;
use rsmapi::barrier::rsmapi_barrier_t;
use rsmapi::controller::{rsmapi_controller_attr_t, TOPOLOGY_SIZES};
use rsmapi::export::rsmapi_access_entry_t;
use rsmapi::sgio::{rsm_iovec_t, rsm_scat_gath_t};

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

/// A UDP port on 127.0.0.1 free a moment ago.
fn free_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `rsm_pair` (two programs, two nodes) over controller `udp` on this host's loopback;
/// across namespaces with loss, and over `eth`: `c_netns.rs`.
#[test]
fn the_pair_example_runs_over_udp_between_two_processes() {
    let exe = build_c("examples/c/rsm_pair.c", &["-pedantic"]);
    let table = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("rsm_pair-{}.nodes", std::process::id()));
    std::fs::write(
        &table,
        format!(
            "1 udp:127.0.0.1:{}\n2 udp:127.0.0.1:{}\n",
            free_port(),
            free_port()
        ),
    )
    .unwrap();
    let table = table.to_str().unwrap();
    let mut exp = Command::new(&exe)
        .args(["export", "udp", "2"])
        .env_remove("LD_LIBRARY_PATH")
        .env("MYRIX_RSM_NODES", table)
        .env("MYRIX_RSM_NODE", "1")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(exp.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut out, &mut first).unwrap();
    let seg = first.trim().strip_prefix("segment ").map(str::to_string);
    let imp = seg.as_ref().map(|seg| {
        run(
            &exe,
            &["import", "udp", "1", seg],
            &[("MYRIX_RSM_NODES", table), ("MYRIX_RSM_NODE", "2")],
            Duration::from_secs(60),
        )
    });
    // The exporter ends once the importer's last signal came (or its wait timed out).
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let est = exp.wait().unwrap();
    let imp = imp.unwrap_or_else(|| panic!("exporter said {first:?}"));
    let t = text(&imp);
    assert!(imp.status.success() && est.success(), "{t}\n{rest}");
    assert!(t.contains("importer: got the 8192-byte reply"), "{t}");
    assert!(
        rest.contains("exporter: 196608 bytes, 64 words and 4 pieces verified"),
        "{rest}"
    );
}

/// Bad command lines get the usage and status 2; a network controller without a node
/// table is RSMAPI's "controller not present", not a crash.
#[test]
fn the_pair_example_refuses_bad_arguments() {
    let exe = build_c("examples/c/rsm_pair.c", &["-pedantic"]);
    for args in [
        &[][..],
        &["export", "udp"],
        &["export", "udp", "0"],
        &["import", "udp", "1", "zz"],
        &["import", "udp", "1", "0x80000000x"],
        &["serve", "udp", "1"],
    ] {
        let out = run(&exe, args, &[], Duration::from_secs(10));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains("usage: rsm_pair"), "{args:?}");
    }
    let out = Command::new(&exe)
        .args(["export", "udp", "2"])
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("MYRIX_RSM_NODES")
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!(
            "rsm_get_controller((char *)ctlr_name, &ctlr) failed: error {}",
            RsmError::CtlrNotPresent.code()
        )),
        "{t}"
    );
}

/// A program written for illumos links with `-lrsm` and needs `librsm.so.2`, its
/// soname there: both names are links to librsmapi.so, and such a program runs.
#[test]
fn a_program_linked_with_lrsm_needs_librsm_so_2_and_runs() {
    let lib = cbuild::LIB.path();
    let libdir = lib.parent().expect("the library's directory");
    let dynamic = |f: &Path| {
        let o = Command::new("readelf")
            .arg("-d")
            .arg(f)
            .output()
            .expect("readelf (binutils)");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let d = dynamic(&lib);
    assert!(d.contains("Library soname: [librsm.so.2]"), "{d}");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rsmapi-c-lrsm");
    std::fs::create_dir_all(&out).unwrap();
    let exe = out.join(format!("rsm_hello-{}", std::process::id()));
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let o = Command::new(cc)
        .arg("-std=c11")
        .arg(format!("-I{CRATE}/include"))
        .arg(Path::new(CRATE).join("examples/c/rsm_hello.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", libdir.display()))
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-lrsm")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", myrix_ctest::show(&o));
    let d = dynamic(&exe);
    assert!(d.contains("Shared library: [librsm.so.2]"), "{d}");
    let r = run(&exe, &["loopback"], &[], Duration::from_secs(60));
    let _ = std::fs::remove_file(&exe);
    let t = text(&r);
    assert!(r.status.success() && t.contains("rsm_hello: done"), "{t}");
}
