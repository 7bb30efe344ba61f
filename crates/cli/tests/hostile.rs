//! Hostile command lines from the hardening review: each gets one `myrix: error:` line
//! and exit 2, never a wrapped number, an overflow or a run that exhausts memory.

use std::process::Command;

/// (arguments, a fragment of the error line).
const CASES: &[(&[&str], &str)] = &[
    // STOP below GO and a hysteresis of 2^64 - 1 once; GO at 0 once.
    (
        &["link", "slack", "--max-share", "1e-300"],
        "over the 1 TiB limit",
    ),
    (
        &["link", "slack", "--margin", "1e17"],
        "over the 1 TiB limit",
    ),
    // 7766279631452241920 switches once.
    (
        &[
            "topo",
            "gen",
            "--kind",
            "mesh",
            "--dims",
            "100000x100000x100000x100000",
        ],
        "more than 4096 switches",
    ),
    // Minutes once.
    (
        &["topo", "gen", "--kind", "mesh", "--dims", "1000x1000"],
        "more than 4096 switches",
    ),
    // OOM-killed at 24 GB once.
    (&["topo", "gen", "--switches", "65536"], "at most 4096"),
    // Switch 0 used without a word once.
    (&["routes", "--root", "99"], "root switch 99 does not exist"),
    (&["sim", "--root", "16", "--sim-time", "1us"], "0 to 15"),
    (&["bench", "fabric", "--root", "99"], "root switch 99"),
];

#[test]
fn hostile_inputs_get_one_error_line_and_exit_2() {
    for (args, fragment) in CASES {
        let o = Command::new(env!("CARGO_BIN_EXE_myrix"))
            .args(*args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {err}");
        assert!(
            lines[0].starts_with("myrix: error: ") && lines[0].contains(fragment),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?} printed {:?}", o.stdout);
    }
}

/// Commands on a generated 16-switch network file: (arguments before the file's flag,
/// the flag naming the file, exit code, a fragment of the error line).
const ON_A_FILE: &[(&[&str], &str, i32, &str)] = &[
    (
        &["topo", "show", "--root", "99"],
        "",
        2,
        "--root: root switch 99",
    ),
    // An incomplete map with exit 0 once.
    (
        &["map", "--max-ports", "4"],
        "--topology",
        1,
        "the map is incomplete: 4 of 64 hosts",
    ),
];

#[test]
fn commands_on_a_file_refuse_what_the_network_lacks() {
    let dir = std::env::temp_dir().join(format!("myrix-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let net = dir.join("net.toml");
    let gen = Command::new(env!("CARGO_BIN_EXE_myrix"))
        .args(["topo", "gen", "--switches", "16", "-o"])
        .arg(&net)
        .output()
        .unwrap();
    assert!(gen.status.success());
    for (args, flag, code, fragment) in ON_A_FILE {
        let mut c = Command::new(env!("CARGO_BIN_EXE_myrix"));
        c.args(*args);
        if !flag.is_empty() {
            c.arg(flag);
        }
        let o = c.arg(&net).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(*code), "{args:?}: {err}");
        let first = err.lines().find(|l| l.starts_with("myrix: error: "));
        assert!(
            first.is_some_and(|l| l.contains(fragment)),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?} printed a result");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
