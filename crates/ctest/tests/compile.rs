//! The helper itself: a program is compiled once however many tests ask for it, a
//! compiler's error or absence comes back as such, and a run is cut at its limit.
//! Needs `cc` (skipped, saying so, without one).

use myrix_ctest::{have, run, show, BuildError, Compiler};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn out_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn no_cc() -> bool {
    let missing = !have("cc");
    if missing {
        eprintln!("skipped: no cc");
    }
    missing
}

const HELLO: &str = "#include <stdio.h>\nint main(int c, char **v) { (void)v; printf(\"hello %d\\n\", c); return 0; }\n";

#[test]
fn a_program_asked_for_by_many_threads_is_compiled_once() {
    if no_cc() {
        return;
    }
    let dir = out_dir("once");
    std::fs::create_dir_all(&dir).unwrap();
    let count = dir.join("count");
    let _ = std::fs::remove_file(&count);
    // `cc` behind a script that counts its runs.
    let cc = Compiler::command(
        "sh",
        &["-c", "echo run >> \"$COUNT\" && exec cc \"$@\"", "cc"],
        &dir,
    )
    .env("COUNT", &count)
    .flags(&["-std=c11", "-Wall", "-Werror"]);
    let src = dir.join("hello.c");
    std::fs::write(&src, HELLO).unwrap();
    let exes: Vec<PathBuf> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4).map(|_| s.spawn(|| cc.build(&src))).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(exes.iter().all(|e| *e == dir.join("hello")), "{exes:?}");
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "run\n");
    let mut c = Command::new(&exes[0]);
    c.args(["a", "b"]);
    let o = run(c, Duration::from_secs(30));
    assert!(o.status.success(), "{}", show(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hello 3\n");
    // Nothing half written is left beside it.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn one_output_with_two_command_lines_is_refused() {
    if no_cc() {
        return;
    }
    let cc = Compiler::cc(out_dir("twice")).flags(&["-std=c11"]);
    cc.build_text("twice.c", HELLO).unwrap();
    let other = cc.flags(&["-O1"]);
    let err = std::panic::catch_unwind(|| other.build_text("twice.c", HELLO)).unwrap_err();
    let msg = err.downcast_ref::<String>().expect("a formatted message");
    assert!(
        msg.contains("built twice with different command lines"),
        "{msg}"
    );
}

#[test]
fn a_compile_error_and_a_missing_compiler_come_back_as_such() {
    if no_cc() {
        return;
    }
    let cc = Compiler::cc(out_dir("errors")).flags(&["-std=c11"]);
    match cc.build_text("broken.c", "int main(void) { return undeclared; }\n") {
        Err(BuildError::Failed(text)) => assert!(text.contains("undeclared"), "{text}"),
        other => panic!("{other:?}"),
    }
    assert!(!out_dir("errors").join("broken").exists());
    let none = Compiler::command("myrix-no-such-compiler", &[], out_dir("errors"));
    match none.build_text("hello.c", HELLO) {
        Err(BuildError::NoCompiler(e)) => assert!(e.contains("myrix-no-such-compiler"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_run_is_cut_at_its_limit() {
    let mut c = Command::new("sleep");
    c.arg("30");
    let t = Instant::now();
    let o = run(c, Duration::from_millis(200));
    assert!(!o.status.success(), "{}", show(&o));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}
