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
//! * Across hosts ([`run_on`], `--hosts`, `--hostfile`): [`hosts`] places the ranks;
//!   the ranks of this host start as above, each other host gets a proxy over ssh
//!   ([`remote`], [`proxy`]) that starts its ranks with `PMI_PORT`/`PMI_ID`, served by
//!   [`crate::pmi::tcp`] on a port of the launcher, and reports their exits. The rules
//!   above hold for every rank on every host: any end of the job (a failure, an abort,
//!   the time limit, SIGINT/SIGTERM/SIGHUP of the launcher) closes every proxy's ssh
//!   channel, and a proxy whose channel closes kills its ranks before it exits; the
//!   launcher waits for that. A host that cannot be reached or whose proxy cannot
//!   start a rank is one error ([`LaunchError::Host`], [`LaunchError::Spawn`]).

pub mod hosts;
pub mod proxy;
pub mod remote;

use crate::pmi::server::{Action, Server};
use crate::pmi::tcp::{self, Peer};
use crate::pmi::wire::{Decoder, Framing, Message};
use remote::{pmi_listener, Remote, SignalGuard, SIGNALLED};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

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
    #[error("host {host}: {why}")]
    Host { host: String, why: String },
    #[error("{0}")]
    Hosts(String),
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
    /// A remote rank connected to the PMI port: the stream to answer it on.
    Connected(u32, std::net::TcpStream),
    /// A remote host's proxy connected back (index into the job's remotes).
    ProxyUp(usize),
    /// A remote host's proxy connection closed.
    ProxyGone(usize),
    Report(usize, proxy::Report),
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
    /// `None`: the rank runs on another host (`host`).
    child: Option<Child>,
    /// Where its PMI replies go; `None` until a remote rank connected.
    conn: Option<Box<dyn Write + Send>>,
    status: Option<ExitStatus>,
    /// Index into the job's remotes.
    host: Option<usize>,
}

/// Kills every rank here and ends every remote host's part of the job (the proxies
/// kill their ranks); returns when all are gone.
fn kill_all(ranks: &mut [Rank], remotes: &mut [Remote]) {
    for r in ranks.iter_mut().filter(|r| r.status.is_none()) {
        if let Some(c) = r.child.as_mut() {
            let _ = c.kill();
        }
    }
    for r in ranks.iter_mut().filter(|r| r.status.is_none()) {
        if let Some(c) = r.child.as_mut() {
            r.status = c.wait().ok();
        }
    }
    remote::stop_all(remotes);
    for r in ranks.iter_mut().filter(|r| r.status.is_none()) {
        r.status = Some(ExitStatus::from_raw(libc::SIGKILL));
    }
}

/// Why rank `i`'s exit ends the job, if it does.
fn exit_reason(i: usize, s: ExitStatus, host: Option<&str>) -> Option<(i32, String)> {
    let code = status_code(s);
    let who = match host {
        Some(h) => format!("rank {i} (on {h})"),
        None => format!("rank {i}"),
    };
    (code != 0).then(|| match s.signal() {
        Some(sig) => (code, format!("{who} was killed by signal {sig}")),
        None => (code, format!("{who} exited with status {code}")),
    })
}

fn spawn_rank(
    spec: &LaunchSpec,
    size: u32,
    rank: u32,
    kvsname: &str,
    ns_fd: Option<i32>,
    (local, nlocal): (u32, u32),
) -> Result<(Rank, UnixStream), LaunchError> {
    let (ours, theirs) = UnixStream::pair().map_err(|err| LaunchError::Socket { rank, err })?;
    let read_end = ours
        .try_clone()
        .map_err(|err| LaunchError::Socket { rank, err })?;
    let fd = theirs.as_raw_fd();
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
    let rank = Rank {
        child: Some(child),
        conn: Some(Box::new(ours)),
        status: None,
        host: None,
    };
    Ok((rank, read_end))
}

fn reader(rank: u32, mut conn: impl Read, tx: mpsc::Sender<Event>) {
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

/// Reads a proxy's reports until its connection closes.
fn proxy_reader(host: usize, mut conn: impl Read, tx: mpsc::Sender<Event>) {
    let mut dec = Decoder::new(Framing::Lines);
    let mut buf = [0u8; 4096];
    while let Ok(n @ 1..) = conn.read(&mut buf) {
        dec.feed(&buf[..n]);
        while let Some(m) = dec.next_message() {
            if let Some(r) = m.ok().as_ref().and_then(proxy::parse_report) {
                if tx.send(Event::Report(host, r)).is_err() {
                    return;
                }
            }
        }
    }
    let _ = tx.send(Event::ProxyGone(host));
}

/// Runs a job to its end. Then sweeps what dead RSM `shm` users can still leave on the
/// host: segments are unnamed since session 30 and die with their last holder, so
/// this is for signal FIFOs and older versions' registry entries. Opening the
/// `shm` controller removes the registry entries of every exporter no longer alive
/// (under the registry's lock, judged by the `flock` the kernel dropped), and by now
/// every rank of the job has been waited for. Entries of live processes, this job's
/// or another's, are left alone.
pub fn run(spec: &LaunchSpec) -> Result<Outcome, LaunchError> {
    run_on(spec, None)
}

/// [`run`], with the ranks placed on hosts (`None`: all here).
pub fn run_on(spec: &LaunchSpec, place: Option<&hosts::Placement>) -> Result<Outcome, LaunchError> {
    let out = run_job(spec, place);
    // Its only effect wanted here is the reap; a registry it cannot open holds
    // nothing of ours to remove.
    let _ = myrix_rsm::Controller::get("shm");
    out
}

/// Starts the PMI port and one proxy per remote host for the ranks marked with a
/// host in `ranks`; `names[k]` is remote host `k`.
#[allow(clippy::too_many_arguments)]
fn start_remotes(
    spec: &LaunchSpec,
    names: &[&str],
    ranks: &[Rank],
    locals: &[(u32, u32)],
    kvsname: &str,
    tx: &mpsc::Sender<Event>,
    remotes: &mut Vec<Remote>,
) -> Result<tcp::Acceptor, LaunchError> {
    let size = ranks.len() as u32;
    let (listener, told) = pmi_listener(names)?;
    let expected: tcp::Expected = Arc::new(Mutex::new(Default::default()));
    let mut env = remote::forwarded_env();
    env.extend(spec.env.iter().cloned());
    let apps = spec
        .apps
        .iter()
        .map(|a| proxy::ProxyApp {
            program: a.program.clone(),
            args: a.args.clone(),
            wdir: a.wdir.clone().map(|w| w.into_os_string()),
        })
        .collect::<Vec<_>>();
    let mut specs = Vec::with_capacity(names.len());
    for (k, addr) in told.into_iter().enumerate() {
        let mut ps = proxy::ProxySpec {
            pmi: addr,
            id: tcp::random_id(),
            size,
            kvsname: kvsname.to_string(),
            cwd: std::env::current_dir().ok().map(|d| d.into_os_string()),
            env: env.clone(),
            apps: apps.clone(),
            ranks: Vec::new(),
        };
        let mut exp = expected.lock().unwrap_or_else(|e| e.into_inner());
        exp.insert(ps.id, Peer::Proxy(k));
        for (r, _) in ranks.iter().enumerate().filter(|(_, x)| x.host == Some(k)) {
            let id = tcp::random_id();
            exp.insert(id, Peer::Rank(r as u32));
            ps.ranks.push(proxy::ProxyRank {
                rank: r as u32,
                app: spec.app_of(r as u32).0,
                id,
                local: locals[r].0,
                nlocal: locals[r].1,
            });
        }
        drop(exp);
        specs.push(ps);
    }
    let tx = tx.clone();
    let acceptor = tcp::serve(listener, expected, size, move |peer, s| match peer {
        Peer::Rank(r) => {
            if let Ok(w) = s.try_clone() {
                if tx.send(Event::Connected(r, w)).is_ok() {
                    reader(r, s, tx.clone());
                }
            }
        }
        Peer::Proxy(h) => {
            if tx.send(Event::ProxyUp(h)).is_ok() {
                proxy_reader(h, s, tx.clone());
            }
        }
    })
    .map_err(|e| LaunchError::Hosts(format!("the PMI port: {e}")))?;
    let exe =
        std::env::current_exe().map_err(|e| LaunchError::Hosts(format!("where is myrix? {e}")))?;
    for (k, ps) in specs.iter().enumerate() {
        let r = Remote::start(names[k], ps, &exe).map_err(LaunchError::Hosts)?;
        remotes.push(r);
    }
    Ok(acceptor)
}

fn run_job(spec: &LaunchSpec, place: Option<&hosts::Placement>) -> Result<Outcome, LaunchError> {
    if spec.apps.is_empty() {
        return Err(LaunchError::NoApp);
    }
    let size = check_ranks(spec.ranks())?;
    if let Some(a) = spec.apps.iter().find(|a| a.ranks == 0) {
        return Err(LaunchError::Ranks(u64::from(a.ranks)));
    }
    if let Some(p) = place {
        if !spec.netns.is_empty() {
            return Err(LaunchError::Hosts(
                "--hosts/--hostfile and --netns cannot be combined".into(),
            ));
        }
        if p.host_of.len() != size as usize {
            return Err(LaunchError::Hosts(format!(
                "{} ranks placed for a job of {size}",
                p.host_of.len()
            )));
        }
    }
    static JOBS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let kvsname = format!(
        "myrix_{}_{}",
        std::process::id(),
        JOBS.fetch_add(1, Ordering::Relaxed)
    );
    let netns = open_netns(&spec.netns)?;
    let mut server = Server::new(size, &kvsname);
    if spec.apps.len() > 1 {
        server.set_appnums((0..size).map(|r| spec.app_of(r).0 as u32).collect());
    }
    // Each rank's (local rank, ranks on its node) and, across hosts, the mapping.
    let locals: Vec<(u32, u32)> = match (place, netns.len() as u32) {
        (Some(p), _) => {
            let nodes = p.nodes();
            server.set_process_mapping(hosts::process_mapping(&nodes));
            hosts::local_ranks(&nodes)
        }
        (None, 0) => (0..size).map(|r| (r, size)).collect(),
        (None, k) => (0..size)
            .map(|r| (r / k, size / k + u32::from(r % k < size % k)))
            .collect(),
    };
    // Remote host k is `place.hosts[remote_hosts[k]]`.
    let remote_hosts: Vec<usize> = place.map_or(Vec::new(), |p| {
        (0..p.hosts.len())
            .filter(|&h| !p.local[h] && p.host_of.contains(&h))
            .collect()
    });
    let remote_of = |r: u32| {
        let p = place?;
        let h = p.host_of[r as usize];
        remote_hosts.iter().position(|&x| x == h)
    };
    let (tx, rx) = mpsc::channel();
    let mut ranks: Vec<Rank> = Vec::with_capacity(size as usize);
    let mut remotes: Vec<Remote> = Vec::new();
    for r in 0..size {
        if let Some(k) = remote_of(r) {
            ranks.push(Rank {
                child: None,
                conn: None,
                status: None,
                host: Some(k),
            });
            continue;
        }
        let ns = match netns.len() {
            0 => None,
            k => Some(netns[r as usize % k].as_raw_fd()),
        };
        let (rank, conn) = match spawn_rank(spec, size, r, &kvsname, ns, locals[r as usize]) {
            Ok(x) => x,
            Err(e) => {
                kill_all(&mut ranks, &mut remotes);
                return Err(e);
            }
        };
        let tx = tx.clone();
        std::thread::spawn(move || reader(r, conn, tx));
        ranks.push(rank);
    }
    let mut acceptor = None;
    let _signals = (!remote_hosts.is_empty()).then(SignalGuard::install);
    if let Some(p) = place.filter(|_| !remote_hosts.is_empty()) {
        let names: Vec<&str> = remote_hosts.iter().map(|&h| p.hosts[h].as_str()).collect();
        let started = start_remotes(spec, &names, &ranks, &locals, &kvsname, &tx, &mut remotes);
        match started {
            Ok(a) => acceptor = Some(a),
            Err(e) => {
                kill_all(&mut ranks, &mut remotes);
                return Err(e);
            }
        }
    }
    drop(tx);
    // Ends the job: the PMI port closed, every rank here and on other hosts gone.
    let end = |ranks: &mut [Rank], remotes: &mut [Remote], acc: &mut Option<tcp::Acceptor>| {
        if let Some(a) = acc.take() {
            a.stop();
        }
        kill_all(ranks, remotes);
    };
    let deadline = spec.timeout.map(|t| Instant::now() + t);
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
                            if let Some(w) =
                                ranks.get_mut(to as usize).and_then(|x| x.conn.as_mut())
                            {
                                let _ = w.write_all(m.to_pmi1().as_bytes());
                            }
                        }
                        Action::Abort { rank, code } => {
                            end(&mut ranks, &mut remotes, &mut acceptor);
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
            Ok(Event::Connected(r, s)) => {
                if let Some(x) = ranks.get_mut(r as usize) {
                    x.conn = Some(Box::new(s));
                }
            }
            Ok(Event::ProxyUp(k)) => remotes[k].up = true,
            Ok(Event::ProxyGone(k)) => remotes[k].gone = true,
            Ok(Event::Report(k, proxy::Report::Exited { rank, raw_status })) => {
                let i = rank as usize;
                if let Some(x) = ranks.get_mut(i).filter(|x| x.host == Some(k)) {
                    if x.status.is_none() {
                        let s = ExitStatus::from_raw(raw_status);
                        x.status = Some(s);
                        if first_bad.is_none() {
                            first_bad = exit_reason(i, s, Some(&remotes[k].name));
                        }
                    }
                }
            }
            Ok(Event::Report(k, proxy::Report::Failed { rank, why })) => {
                let program = spec.app_of(rank.min(size - 1)).1.program.clone();
                end(&mut ranks, &mut remotes, &mut acceptor);
                return Err(LaunchError::Spawn {
                    rank,
                    program: format!("{} on {}", program.to_string_lossy(), remotes[k].name),
                    err: std::io::Error::other(why),
                });
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
            let Some(child) = r.child.as_mut() else {
                running += 1;
                continue;
            };
            match child.try_wait() {
                Ok(Some(s)) => {
                    r.status = Some(s);
                    if first_bad.is_none() {
                        first_bad = exit_reason(i, s, None);
                    }
                }
                Ok(None) => running += 1,
                Err(_) => {
                    r.status = Some(ExitStatus::from_raw(1 << 8));
                }
            }
        }
        // A host whose proxy never came, or whose connection ended with ranks on it.
        for (k, rm) in remotes.iter_mut().enumerate() {
            rm.poll();
            let Some(waiting) = ranks
                .iter()
                .position(|x| x.host == Some(k) && x.status.is_none())
            else {
                continue;
            };
            let ssh = |s: ExitStatus| match (s.code(), s.signal()) {
                (Some(c), _) => format!("ssh exited with status {c}"),
                (_, Some(sig)) => format!("ssh was killed by signal {sig}"),
                _ => "ssh ended".into(),
            };
            let why = match (rm.up, rm.exited) {
                (false, Some((s, _))) => format!(
                    "{} before its ranks started (its message, if any, is above)",
                    ssh(s)
                ),
                (false, None) if rm.started.elapsed() > remote::START_TIMEOUT => format!(
                    "its proxy did not connect back within {} s",
                    remote::START_TIMEOUT.as_secs()
                ),
                (true, Some((s, t))) if rm.gone || t.elapsed() > Duration::from_secs(2) => {
                    if first_bad.is_none() {
                        first_bad = Some((
                            255,
                            format!(
                                "host {}: lost ({}) while rank {waiting} was running",
                                rm.name,
                                ssh(s)
                            ),
                        ));
                    }
                    continue;
                }
                _ => continue,
            };
            let host = rm.name.clone();
            end(&mut ranks, &mut remotes, &mut acceptor);
            return Err(LaunchError::Host { host, why });
        }
        let sig = SIGNALLED.swap(0, Ordering::Relaxed);
        if sig != 0 && first_bad.is_none() && !remote_hosts.is_empty() {
            first_bad = Some((128 + sig, format!("the launcher got signal {sig}")));
        }
        if first_bad.is_none() {
            first_bad = unfinalized(&ranks, &closed, &server);
        }
        if first_bad.is_none() && running > 0 && deadline.is_some_and(|d| Instant::now() >= d) {
            let t = spec.timeout.unwrap_or_default().as_secs();
            first_bad = Some((
                TIMED_OUT,
                format!("the job ran past its time limit ({t} s)"),
            ));
        }
        if let Some((code, why)) = &first_bad {
            let others = running > 0;
            end(&mut ranks, &mut remotes, &mut acceptor);
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
            // Every rank has exited: the proxies end too, the PMI port closes; take
            // the messages still queued and the closes, for a last check of ranks
            // that did not finalize.
            end(&mut ranks, &mut remotes, &mut acceptor);
            let until = Instant::now() + Duration::from_secs(2);
            while Instant::now() < until {
                match rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(Event::Msg(r, m)) => {
                        let _ = server.handle(r, &m);
                    }
                    Ok(Event::Closed(r)) => {
                        if let Some(c) = closed.get_mut(r as usize) {
                            *c = true;
                        }
                    }
                    Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
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
mod tests;
