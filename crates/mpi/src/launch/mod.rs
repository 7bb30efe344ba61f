//! `myrix mpiexec`: starts N ranks of a program on this host, each with the child end
//! of a socketpair on `PMI_FD`, and serves PMI-1 on the other ends
//! ([`crate::pmi::server`]).
//!
//! * A job may run several programs (MPMD, `mpiexec -n 1 a : -n 4 b`): the
//!   [`App`]s of [`LaunchSpec::apps`] get consecutive ranks of one `MPI_COMM_WORLD`
//!   and their index as application number (PMI `get_appnum`, `MPI_APPNUM`).
//!
//! * The job's exit status is the first non-zero status of a rank (a rank killed by
//!   signal `s` counts as `128 + s`), or the code a rank passed to `abort`.
//! * A rank that aborts, is killed by a signal or exits non-zero ends the job: the
//!   others are killed (SIGKILL), as hydra does. So does a rank that joined PMI
//!   (`cmd=init`) and exits without `finalize` (status 1), since the others would
//!   wait for it forever.
//! * Standard output and error of the ranks are the launcher's; rank 0 reads its
//!   standard input, the others read nothing.
//! * If the launcher itself dies (killed), the ranks get SIGKILL (Linux's
//!   parent-death signal), so no rank outlives its job.
//! * Once every rank was waited for, the RSM `shm` registry is reaped ([`run`]): a
//!   rank killed (by a signal, or by us) leaves no segment file behind.
//! * `--netns a,b` ([`LaunchSpec::netns`]): rank `i` runs in the network namespace
//!   `/run/netns/<list[i % k]>` (as `ip netns add` makes them), entered with
//!   `setns(2)` in the child before exec (needs `CAP_SYS_ADMIN`). Every namespace is
//!   opened before any rank starts: a missing one is one [`LaunchError::Netns`].
//!   `MPI_LOCALRANKID`/`MPI_LOCALNRANKS` count the ranks of the rank's namespace; the
//!   library finds the nodes itself anyway (`crate::job::node_identity`).
//! * A job still running after [`LaunchSpec::timeout`] is ended: every rank killed,
//!   status [`TIMED_OUT`].

use crate::pmi::server::{Action, Server};
use crate::pmi::wire::{Decoder, Framing, Message};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The most ranks `myrix mpiexec` starts on one host.
pub const MAX_RANKS: u32 = 4096;

/// One program of a job and how many ranks run it.
#[derive(Debug, Clone)]
pub struct App {
    pub ranks: u32,
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The ranks' working directory; `None`: the launcher's.
    pub wdir: Option<std::path::PathBuf>,
}

impl App {
    /// `ranks` ranks of `program args…` in the launcher's directory.
    pub fn new(ranks: u32, program: impl Into<OsString>, args: Vec<OsString>) -> App {
        App {
            ranks,
            program: program.into(),
            args,
            wdir: None,
        }
    }
}

/// What to start.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// The programs, in rank order (at least one).
    pub apps: Vec<App>,
    /// Extra environment for every rank.
    pub env: Vec<(OsString, OsString)>,
    /// Network namespaces (names under `/run/netns`): rank `i` runs in
    /// `netns[i % len]`. Empty: the launcher's own.
    pub netns: Vec<String>,
    /// How long the job may run: past it every rank is killed and the job ends with
    /// [`TIMED_OUT`] (`MPIEXEC_TIMEOUT`, as hydra reads it).
    pub timeout: Option<Duration>,
}

/// The exit status of a job ended by its time limit (as `timeout(1)`'s).
pub const TIMED_OUT: i32 = 124;

/// Why a job could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("-n {0}: the number of ranks must be between 1 and {MAX_RANKS}")]
    Ranks(u64),
    #[error("starting rank {rank} ({program}): {err}")]
    Spawn {
        rank: u32,
        program: String,
        err: std::io::Error,
    },
    #[error("creating the PMI socket for rank {rank}: {err}")]
    Socket { rank: u32, err: std::io::Error },
    #[error("network namespace {name:?} (/run/netns/{name}): {err}")]
    Netns { name: String, err: std::io::Error },
    #[error("no program to start")]
    NoApp,
}

impl LaunchSpec {
    /// The job's size: every app's ranks (saturating; [`check_ranks`] refuses it
    /// past [`MAX_RANKS`]).
    pub fn ranks(&self) -> u64 {
        self.apps.iter().map(|a| u64::from(a.ranks)).sum()
    }

    /// The app running rank `rank`, and its index.
    fn app_of(&self, rank: u32) -> (usize, &App) {
        let mut first = 0u32;
        for (i, a) in self.apps.iter().enumerate() {
            if rank < first + a.ranks {
                return (i, a);
            }
            first += a.ranks;
        }
        let last = self.apps.len() - 1;
        (last, &self.apps[last])
    }
}

/// Opens `/run/netns/<name>` for each name (a name with a `/` or empty is refused).
fn open_netns(names: &[String]) -> Result<Vec<std::fs::File>, LaunchError> {
    names
        .iter()
        .map(|name| {
            let err = |err| LaunchError::Netns {
                name: name.clone(),
                err,
            };
            if name.is_empty() || name.contains('/') || name == "." || name == ".." {
                return Err(err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a namespace name",
                )));
            }
            let f = std::fs::File::open(format!("/run/netns/{name}")).map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    err(std::io::Error::new(
                        e.kind(),
                        "no such network namespace (see `ip netns list`)",
                    ))
                } else {
                    err(e)
                }
            })?;
            Ok(f)
        })
        .collect()
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The launcher's exit status.
    pub code: i32,
    /// Why the job ended early, if it did (one line, for standard error).
    pub reason: Option<String>,
}

enum Event {
    Msg(u32, Message),
    Bad(u32, String),
    Closed(u32),
}

/// The 8-bit process exit status for an MPI error or abort code: its low byte, or 1
/// when that byte is 0 but the code is not (so a failure never looks like success).
pub fn exit_status(code: i32) -> u8 {
    match (code & 0xff) as u8 {
        0 if code != 0 => 1,
        b => b,
    }
}

/// Checks `-n`.
pub fn check_ranks(n: u64) -> Result<u32, LaunchError> {
    match u32::try_from(n) {
        Ok(n) if (1..=MAX_RANKS).contains(&n) => Ok(n),
        _ => Err(LaunchError::Ranks(n)),
    }
}

fn status_code(s: ExitStatus) -> i32 {
    match (s.code(), s.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    }
}

struct Rank {
    child: Child,
    conn: UnixStream,
    status: Option<ExitStatus>,
}

fn kill_all(ranks: &mut [Rank]) {
    for r in ranks.iter_mut().filter(|r| r.status.is_none()) {
        let _ = r.child.kill();
    }
    for r in ranks.iter_mut().filter(|r| r.status.is_none()) {
        r.status = r.child.wait().ok();
    }
}

fn spawn_rank(
    spec: &LaunchSpec,
    size: u32,
    rank: u32,
    kvsname: &str,
    netns: &[std::fs::File],
) -> Result<Rank, LaunchError> {
    let (ours, theirs) = UnixStream::pair().map_err(|err| LaunchError::Socket { rank, err })?;
    let fd = theirs.as_raw_fd();
    let (ns_fd, local, nlocal) = match netns.len() as u32 {
        0 => (None, rank, size),
        k => (
            Some(netns[(rank % k) as usize].as_raw_fd()),
            rank / k,
            size / k + u32::from(rank % k < size % k),
        ),
    };
    let (_, app) = spec.app_of(rank);
    let mut cmd = Command::new(&app.program);
    if let Some(d) = &app.wdir {
        cmd.current_dir(d);
    }
    cmd.args(&app.args)
        .env("PMI_FD", fd.to_string())
        .env("PMI_RANK", rank.to_string())
        .env("PMI_SIZE", size.to_string())
        .env("MPI_LOCALRANKID", local.to_string())
        .env("MPI_LOCALNRANKS", nlocal.to_string())
        .env("MYRIX_MPI_KVSNAME", kvsname)
        .env_remove("PMI_PORT")
        .env_remove("PMI_ID")
        .env_remove("PMI_JOBID")
        .stdin(if rank == 0 {
            Stdio::inherit()
        } else {
            Stdio::null()
        });
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    // SAFETY: the closure runs in the child between fork and exec and only calls
    // fcntl, setns and prctl, which are async-signal-safe; it clears close-on-exec on
    // the child's end of the socketpair so the program inherits it as PMI_FD, enters
    // the rank's network namespace (an fd `run` keeps open until every rank started),
    // and (on Linux) asks for SIGKILL if the launcher dies, so no rank outlives its
    // job. `run` forks from the thread that reaps the ranks, which lives until they end.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(ns) = ns_fd {
                if libc::setns(ns, libc::CLONE_NEWNET) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|err| LaunchError::Spawn {
        rank,
        program: app.program.to_string_lossy().into_owned(),
        err,
    })?;
    drop(theirs);
    Ok(Rank {
        child,
        conn: ours,
        status: None,
    })
}

fn reader(rank: u32, mut conn: UnixStream, tx: mpsc::Sender<Event>) {
    let mut dec = Decoder::new(Framing::Lines);
    let mut buf = [0u8; 4096];
    loop {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => {
                let _ = tx.send(Event::Closed(rank));
                return;
            }
            Ok(n) => dec.feed(&buf[..n]),
        }
        while let Some(m) = dec.next_message() {
            let ev = match m {
                Ok(m) => Event::Msg(rank, m),
                Err(e) => Event::Bad(rank, e.to_string()),
            };
            if tx.send(ev).is_err() {
                return;
            }
        }
    }
}

/// Runs a job to its end. Then sweeps what dead RSM `shm` users can still leave on the
/// host: segments are unnamed since session 30 and die with their last holder, so
/// this is for signal FIFOs and older versions' registry entries. Opening the
/// `shm` controller removes the registry entries of every exporter no longer alive
/// (under the registry's lock, judged by the `flock` the kernel dropped), and by now
/// every rank of the job has been waited for. Entries of live processes, this job's
/// or another's, are left alone.
pub fn run(spec: &LaunchSpec) -> Result<Outcome, LaunchError> {
    let out = run_job(spec);
    // Its only effect wanted here is the reap; a registry it cannot open holds
    // nothing of ours to remove.
    let _ = myrix_rsm::Controller::get("shm");
    out
}

fn run_job(spec: &LaunchSpec) -> Result<Outcome, LaunchError> {
    if spec.apps.is_empty() {
        return Err(LaunchError::NoApp);
    }
    let size = check_ranks(spec.ranks())?;
    if let Some(a) = spec.apps.iter().find(|a| a.ranks == 0) {
        return Err(LaunchError::Ranks(u64::from(a.ranks)));
    }
    static JOBS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let kvsname = format!(
        "myrix_{}_{}",
        std::process::id(),
        JOBS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let netns = open_netns(&spec.netns)?;
    let mut server = Server::new(size, &kvsname);
    if spec.apps.len() > 1 {
        server.set_appnums((0..size).map(|r| spec.app_of(r).0 as u32).collect());
    }
    let (tx, rx) = mpsc::channel();
    let mut ranks: Vec<Rank> = Vec::with_capacity(size as usize);
    for r in 0..size {
        let rank = match spawn_rank(spec, size, r, &kvsname, &netns) {
            Ok(rank) => rank,
            Err(e) => {
                kill_all(&mut ranks);
                return Err(e);
            }
        };
        let conn = rank
            .conn
            .try_clone()
            .map_err(|err| LaunchError::Socket { rank: r, err });
        let conn = match conn {
            Ok(c) => c,
            Err(e) => {
                ranks.push(rank);
                kill_all(&mut ranks);
                return Err(e);
            }
        };
        let tx = tx.clone();
        std::thread::spawn(move || reader(r, conn, tx));
        ranks.push(rank);
    }
    drop(tx);
    let deadline = spec.timeout.map(|t| std::time::Instant::now() + t);
    let mut first_bad: Option<(i32, String)> = None;
    let mut closed = vec![false; size as usize];
    // A rank that exited 0 after joining PMI without finalizing, once its connection
    // is closed (so every message it sent has been handled).
    let unfinalized = |ranks: &[Rank], closed: &[bool], server: &Server| {
        ranks.iter().enumerate().find_map(|(i, r)| {
            let clean = r.status.is_some_and(|s| s.success());
            let rank = i as u32;
            (clean && closed[i] && server.initialized(rank) && !server.finalized(rank))
                .then(|| (1, format!("rank {i} exited without MPI_Finalize")))
        })
    };
    loop {
        // PMI traffic first; then reap the ranks that ended.
        match rx.recv_timeout(Duration::from_millis(10)) {
            Ok(Event::Msg(r, m)) => {
                for a in server.handle(r, &m) {
                    match a {
                        Action::Send(to, m) => {
                            if let Some(rank) = ranks.get_mut(to as usize) {
                                let _ = rank.conn.write_all(m.to_pmi1().as_bytes());
                            }
                        }
                        Action::Abort { rank, code } => {
                            kill_all(&mut ranks);
                            return Ok(Outcome {
                                code: i32::from(exit_status(code)),
                                reason: Some(format!(
                                    "rank {rank} called MPI_Abort with code {code}; job ended"
                                )),
                            });
                        }
                    }
                }
                continue;
            }
            Ok(Event::Bad(r, e)) => {
                eprintln!("myrix mpiexec: rank {r}: ignoring a malformed PMI message: {e}");
                continue;
            }
            Ok(Event::Closed(r)) => {
                if let Some(c) = closed.get_mut(r as usize) {
                    *c = true;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(Duration::from_millis(10))
            }
        }
        let mut running = 0;
        for (i, r) in ranks.iter_mut().enumerate() {
            if r.status.is_some() {
                continue;
            }
            match r.child.try_wait() {
                Ok(Some(s)) => {
                    r.status = Some(s);
                    let code = status_code(s);
                    if code != 0 && first_bad.is_none() {
                        let why = match s.signal() {
                            Some(sig) => format!("rank {i} was killed by signal {sig}"),
                            None => format!("rank {i} exited with status {code}"),
                        };
                        first_bad = Some((code, why));
                    }
                }
                Ok(None) => running += 1,
                Err(_) => {
                    r.status = Some(ExitStatus::from_raw(1 << 8));
                }
            }
        }
        if first_bad.is_none() {
            first_bad = unfinalized(&ranks, &closed, &server);
        }
        if first_bad.is_none()
            && running > 0
            && deadline.is_some_and(|d| std::time::Instant::now() >= d)
        {
            let t = spec.timeout.unwrap_or_default().as_secs();
            first_bad = Some((
                TIMED_OUT,
                format!("the job ran past its time limit ({t} s)"),
            ));
        }
        if let Some((code, why)) = &first_bad {
            let others = running > 0;
            kill_all(&mut ranks);
            return Ok(Outcome {
                code: *code,
                reason: Some(if others {
                    format!("{why}; the other ranks were killed")
                } else {
                    why.clone()
                }),
            });
        }
        if running == 0 {
            // Every rank has exited: take the messages still queued and the closes,
            // for a last check of ranks that did not finalize.
            let end = std::time::Instant::now() + Duration::from_secs(2);
            while std::time::Instant::now() < end {
                match rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(Event::Msg(r, m)) => {
                        let _ = server.handle(r, &m);
                    }
                    Ok(Event::Closed(r)) => {
                        if let Some(c) = closed.get_mut(r as usize) {
                            *c = true;
                        }
                    }
                    Ok(Event::Bad(..)) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
            if let Some((code, why)) = unfinalized(&ranks, &closed, &server) {
                return Ok(Outcome {
                    code,
                    reason: Some(why),
                });
            }
            return Ok(Outcome {
                code: 0,
                reason: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bash, not sh: dash cannot redirect to descriptors above 9, which PMI_FD is
    /// when tests run in parallel.
    fn sh(n: u32, script: &str) -> LaunchSpec {
        LaunchSpec {
            apps: vec![App::new(n, "/bin/bash", vec!["-c".into(), script.into()])],
            env: vec![],
            netns: vec![],
            timeout: None,
        }
    }

    #[test]
    fn exit_statuses_never_hide_a_failure() {
        assert_eq!(exit_status(0), 0);
        assert_eq!(exit_status(7), 7);
        assert_eq!(exit_status(256), 1);
        assert_eq!(exit_status(-1), 255);
    }

    #[test]
    fn rank_counts_are_bounded() {
        assert!(check_ranks(0).is_err());
        assert!(check_ranks(4097).is_err());
        assert_eq!(check_ranks(4096).unwrap(), 4096);
    }

    #[test]
    fn a_job_past_its_time_limit_is_ended() {
        let mut spec = sh(2, "sleep 30");
        spec.timeout = Some(Duration::from_millis(300));
        let t = std::time::Instant::now();
        let o = run(&spec).unwrap();
        assert_eq!(o.code, TIMED_OUT);
        assert!(o.reason.unwrap().contains("time limit"));
        assert!(t.elapsed() < Duration::from_secs(10));
        // A job that ends in time is not touched.
        spec = sh(2, "exit 0");
        spec.timeout = Some(Duration::from_secs(30));
        assert_eq!(run(&spec).unwrap().code, 0);
    }

    #[test]
    fn statuses() {
        assert_eq!(run(&sh(3, "exit 0")).unwrap().code, 0);
        let o = run(&sh(3, "[ $PMI_RANK = 1 ] && exit 5; sleep 20")).unwrap();
        assert_eq!(o.code, 5);
        let o = run(&sh(2, "[ $PMI_RANK = 0 ] && kill -9 $$; sleep 20")).unwrap();
        assert_eq!(o.code, 137);
        assert!(o.reason.unwrap().contains("signal 9"));
    }

    #[test]
    fn pmi_over_the_inherited_fd() {
        // A rank speaking PMI-1 by hand through its descriptor: abort with code 9.
        let o = run(&sh(
            2,
            r#"[ $PMI_RANK = 1 ] && printf 'cmd=abort exitcode=9\n' >&$PMI_FD; sleep 20"#,
        ))
        .unwrap();
        assert_eq!(o.code, 9);
    }

    #[test]
    fn exiting_without_finalize_ends_the_job() {
        let o = run(&sh(
            2,
            r#"printf 'cmd=init pmi_version=1 pmi_subversion=1\n' >&$PMI_FD; [ $PMI_RANK = 0 ] && exit 0; sleep 20"#,
        ))
        .unwrap();
        assert_eq!(o.code, 1);
        assert!(o.reason.unwrap().contains("without MPI_Finalize"));
    }

    #[test]
    fn mpmd_apps_share_one_job_with_their_numbers() {
        // Each rank asks its application number over PMI and checks it, the job's
        // size, its place in rank order and (the second app) its directory.
        let check = |want: u32, ranks: &str, dir: &str| {
            format!(
                r#"printf 'cmd=get_appnum\n' >&$PMI_FD; read -r reply <&$PMI_FD
                [ "${{reply##*appnum=}}" = {want} ] || exit 3
                [ "$PMI_SIZE" = 5 ] || exit 4
                case " {ranks} " in *" $PMI_RANK "*) ;; *) exit 5;; esac
                [ "$(pwd)" = {dir} ] || exit 6"#
            )
        };
        let here = std::env::current_dir().unwrap();
        let mut b = App::new(
            3,
            "/bin/bash",
            vec!["-c".into(), check(1, "2 3 4", "/").into()],
        );
        b.wdir = Some("/".into());
        let spec = LaunchSpec {
            apps: vec![
                App::new(
                    2,
                    "/bin/bash",
                    vec![
                        "-c".into(),
                        check(0, "0 1", &here.display().to_string()).into(),
                    ],
                ),
                b,
            ],
            env: vec![],
            netns: vec![],
            timeout: Some(Duration::from_secs(60)),
        };
        let o = run(&spec).unwrap();
        assert_eq!(o.code, 0, "{:?}", o.reason);
        let mut empty = spec.clone();
        empty.apps[1].ranks = 0;
        assert!(matches!(run(&empty), Err(LaunchError::Ranks(0))));
        empty.apps.clear();
        assert!(matches!(run(&empty), Err(LaunchError::NoApp)));
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let spec = LaunchSpec {
            apps: vec![App::new(2, "/nonexistent/prog", vec![])],
            env: vec![],
            netns: vec![],
            timeout: None,
        };
        assert!(matches!(run(&spec), Err(LaunchError::Spawn { .. })));
    }
}
