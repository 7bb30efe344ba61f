//! `myrix mpiexec --hosts` / `--hostfile` without root: the "other host" is
//! 192.0.2.1 (TEST-NET-1, never this machine) and `MYRIX_SSH` names a stand-in for
//! ssh that runs the remote command here, so the launcher's whole remote path runs
//! (proxy over the ssh channel, PMI over TCP with `PMI_PORT`/`PMI_ID` on
//! `MYRIX_PMI_ADDR=127.0.0.1`, exit reports, the job's end) in a plain `cargo test`.
//! The same across two network namespaces with a real sshd: `netns_hosts.rs`.

mod common;

use common::mpi::{build, myrix, run, show};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const OTHER: &str = "192.0.2.1";

/// A stand-in for ssh: drops the options and the host, runs the remote command (the
/// last argument) with sh, as sshd would.
fn fake_ssh() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mpi-hosts-fake-ssh");
    if !p.exists() {
        let tmp = p.with_extension(format!("{}", std::process::id()));
        std::fs::write(
            &tmp,
            "#!/bin/sh\nfor a; do last=$a; done\nexec sh -c \"$last\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::rename(&tmp, &p).unwrap();
    }
    p
}

fn mpiexec(hosts: &str, n: u32) -> Command {
    let mut c = myrix();
    c.env("MYRIX_SSH", fake_ssh())
        .env("MYRIX_PMI_ADDR", "127.0.0.1")
        .args(["mpiexec", "--hosts", hosts, "-n", &n.to_string()]);
    c
}

/// Processes whose command line holds `marker`.
fn with_marker(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // Zombies (state Z) are gone already; only the reaping is missing.
        let zombie = stat.rsplit(") ").next().is_some_and(|s| s.starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmd).contains(marker) {
            out.push(pid);
        }
    }
    out
}

/// A `sleep` whose argument marks it as this test's: `60.<pid><tag>` seconds.
fn marker(tag: u32) -> String {
    format!("60.{}{tag}", std::process::id())
}

fn assert_none_left(marker: &str) {
    let end = Instant::now() + Duration::from_secs(10);
    while !with_marker(marker).is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(with_marker(marker), Vec::<u32>::new(), "ranks left running");
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn ranks_are_placed_as_hydra_places_them() {
    let script = r#"echo "$PMI_RANK ${PMI_PORT:+port}${PMI_FD:+fd} $MPI_LOCALRANKID/$MPI_LOCALNRANKS $MYRIX_HOSTS_TEST $(pwd)""#;
    let mut c = mpiexec(&format!("localhost:2,{OTHER}"), 5);
    c.env("MYRIX_HOSTS_TEST", "sent")
        .current_dir("/")
        .args(["sh", "-c", script]);
    let o = run(c, Duration::from_secs(60));
    assert!(o.status.success(), "{}", show(&o));
    let mut lines: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    // Slots: localhost localhost OTHER, wrapping round: 0 1 here, 2 there, 3 4 here.
    assert_eq!(
        lines,
        [
            "0 fd 0/4 sent /",
            "1 fd 1/4 sent /",
            "2 port 0/1 sent /",
            "3 fd 2/4 sent /",
            "4 fd 3/4 sent /"
        ],
        "{}",
        show(&o)
    );
}

#[test]
fn mpi_programs_run_with_ranks_on_the_other_host() {
    let hello = build("hello");
    let p2p = build("p2p");
    let mut c = mpiexec(&format!("localhost,{OTHER}"), 4);
    c.arg(&p2p);
    common::mpi::assert_every_rank(&run(c, Duration::from_secs(120)), "p2p", 4);
    let mut c = mpiexec(&format!("{OTHER}:2"), 2);
    c.arg(&hello);
    let o = run(c, Duration::from_secs(60));
    assert!(o.status.success(), "{}", show(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for r in 0..2 {
        assert!(out.contains(&format!("rank {r} of 2 on ")), "{}", show(&o));
    }
    // MPI_Abort on the other host ends the job with its code.
    let mut c = mpiexec(&format!("localhost,{OTHER}"), 3);
    c.arg(&hello).arg("abort");
    let o = run(c, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(7), "{}", show(&o));
    assert!(stderr(&o).contains("rank 1 called MPI_Abort with code 7"));
}

#[test]
fn any_end_of_the_job_ends_every_rank_on_every_host() {
    // A rank there exits non-zero; one is killed; the time limit.
    let cases: [(&str, Vec<&str>, i32, &str); 3] = [
        (
            "[ $PMI_RANK = 1 ] && exit 5; exec sleep ",
            vec![],
            5,
            "rank 1 (on 192.0.2.1) exited with status 5",
        ),
        (
            "[ $PMI_RANK = 3 ] && kill -9 $$; exec sleep ",
            vec![],
            137,
            "rank 3 (on 192.0.2.1) was killed by signal 9",
        ),
        ("exec sleep ", vec!["--timeout", "2"], 124, "time limit"),
    ];
    for (i, (script, opts, code, why)) in cases.iter().enumerate() {
        let m = marker(i as u32);
        let mut c = myrix();
        c.env("MYRIX_SSH", fake_ssh())
            .env("MYRIX_PMI_ADDR", "127.0.0.1")
            .arg("mpiexec")
            .args(opts)
            .args(["--hosts", &format!("localhost,{OTHER}"), "-n", "4"])
            .args(["sh", "-c", &format!("{script}{m}")]);
        let t = Instant::now();
        let o = run(c, Duration::from_secs(60));
        assert_eq!(o.status.code(), Some(*code), "{}", show(&o));
        assert!(stderr(&o).contains(why), "{}", show(&o));
        assert!(t.elapsed() < Duration::from_secs(30));
        assert_none_left(&m);
    }
    // SIGTERM and SIGKILL of the launcher.
    for (i, sig) in [(3u32, "TERM"), (4, "KILL")] {
        let m = marker(i);
        let mut c = mpiexec(&format!("localhost,{OTHER}"), 4);
        c.args(["sleep", &m])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut launcher = c.spawn().unwrap();
        let end = Instant::now() + Duration::from_secs(30);
        while with_marker(&m).len() < 5 && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(50));
        }
        // The launcher and its 4 ranks (2 of them under the proxy).
        assert!(with_marker(&m).len() >= 5, "the job did not start");
        let killed = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(launcher.id().to_string())
            .status()
            .unwrap();
        assert!(killed.success());
        let st = launcher.wait().unwrap();
        if sig == "TERM" {
            assert_eq!(st.code(), Some(128 + 15), "SIGTERM: the job ended in order");
        }
        assert_none_left(&m);
    }
}

#[test]
fn bad_hosts_are_one_error() {
    let hostfile = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mpi-hosts-empty");
    std::fs::write(&hostfile, "# nothing but a comment\n\n").unwrap();
    let hf = hostfile.to_str().unwrap();
    for (args, code, says) in [
        (vec!["--hosts", "a:0"], 2, "the slot count must be"),
        (
            vec!["--hosts", "a:99999999999999999999"],
            2,
            "the slot count must be",
        ),
        (vec!["--hosts", "a,,b"], 2, "no host name"),
        (vec!["--hostfile", hf], 2, "no hosts in it"),
        (vec!["--hostfile", "/nonexistent/hosts"], 2, "No such file"),
        (
            vec!["--hosts", "a", "--netns", "x"],
            2,
            "cannot be used with",
        ),
        (
            vec!["--hosts", "no-such-host.invalid"],
            1,
            "cannot resolve it",
        ),
    ] {
        let mut c = myrix();
        c.arg("mpiexec").args(&args).args(["-n", "2", "true"]);
        let o = run(c, Duration::from_secs(60));
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", show(&o));
        let err = stderr(&o);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one error: {err}");
    }
    // A program missing there; ssh failing.
    let mut c = mpiexec(OTHER, 1);
    c.arg("/nonexistent/prog");
    let o = run(c, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        stderr(&o).contains("starting rank 0 (/nonexistent/prog on 192.0.2.1): No such file"),
        "{}",
        show(&o)
    );
    let mut c = mpiexec(OTHER, 1);
    c.env("MYRIX_SSH", "false").arg("true");
    let o = run(c, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        stderr(&o).contains("host 192.0.2.1: ssh exited with status 1 before its ranks started"),
        "{}",
        show(&o)
    );
}
