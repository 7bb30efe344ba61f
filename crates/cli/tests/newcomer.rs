//! Issue 20's newcomer's path, as tests: the help a first user reads (every option
//! explained, the bare command's output file named), one cap on network sizes across
//! commands, and a benchmark that shows each row as soon as it is measured.

mod common;

use common::myrix;
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn help(path: &[&str]) -> String {
    let mut args = path.to_vec();
    args.push("--help");
    let o = myrix(&args, b"");
    assert!(o.status.success(), "myrix {}: {o:?}", args.join(" "));
    String::from_utf8(o.stdout).unwrap()
}

/// The subcommands listed under `Commands:` in a help text.
fn commands(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect()
}

#[test]
fn the_top_help_says_what_the_bare_command_writes() {
    let text = help(&[]);
    assert!(text.contains("With no command"), "{text}");
    assert!(text.contains("myrix-sweep.svg"), "{text}");
}

#[test]
fn every_option_of_every_command_has_its_help() {
    // Breadth-first over the command tree; the compiler drivers pass their arguments on.
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help(&args);
        for c in commands(&text) {
            if !["mpicc", "mpicxx", "mpiexec"].contains(&c.as_str()) {
                let mut p = path.clone();
                p.push(c);
                todo.push(p);
            }
        }
        // Options are laid out as the flag on one line, its help indented on the next.
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            // An option's own line is indented 2 to 6 spaces; help lines, 10.
            if !(t.starts_with('-') && (2..=6).contains(&(l.len() - t.len()))) {
                continue;
            }
            let next = lines.get(i + 1).copied().unwrap_or("");
            let explained = next.starts_with("          ") && !next.trim().is_empty()
                || t.split("  ").filter(|s| !s.trim().is_empty()).count() > 1;
            assert!(
                explained,
                "myrix {} --help: option {t:?} has no help",
                path.join(" ")
            );
        }
        seen += 1;
    }
    assert!(seen > 15, "only {seen} help texts found");
}

#[test]
fn the_switch_cap_is_the_same_everywhere() {
    for cmd in [
        &["sim", "--switches", "5000"][..],
        &["routes", "--switches", "5000"],
        &["bench", "fabric", "--switches", "5000"],
        &["topo", "gen", "--switches", "5000"],
    ] {
        common::assert_one_error(&myrix(cmd, b""), 2, "4096");
    }
}

#[test]
fn a_benchmark_prints_each_row_as_it_is_measured() {
    let (mut server, addr) = common::shm_server();
    // 8 B for 20 000 round trips, then 1 MiB for 2000: the first row is out long before
    // the second is measured.
    let mut client = Command::new(env!("CARGO_BIN_EXE_myrix"))
        .args(["bench", "pingpong", "--transport", "shm", "--client", &addr])
        .args(["--start", "8", "--end", "1048576", "--multiplier", "131072"])
        .args(["--iterations", "20000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(client.stdout.take().unwrap()).lines();
    let first = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.split_whitespace().next() == Some("8"));
    let running = client.try_wait().unwrap().is_none();
    server.kill().unwrap();
    server.wait().unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    while client.try_wait().unwrap().is_none() {
        assert!(Instant::now() < end, "the client did not end");
        std::thread::sleep(Duration::from_millis(10));
    }
    let first = first.expect("the 8-byte row");
    assert!(first.split_whitespace().count() == 3, "{first}");
    assert!(running, "the row came only at the end of the run");
}
