//! The proxy on a remote host of a `myrix mpiexec --hosts` job (`myrix
//! mpiexec-proxy`, started over ssh at the launcher's path, as hydra starts
//! `hydra_pmi_proxy`): it reads what to start from its standard input
//! ([`ProxySpec`], hex-encoded lines, so no remote shell quoting is involved),
//! connects back to the launcher's PMI port, starts that host's ranks with
//! `PMI_PORT`/`PMI_ID`, and reports each rank's exit status to the launcher.
//!
//! ssh does not carry signals, so the proxy ends its ranks (SIGKILL) as soon as its
//! standard input (the ssh channel) or its connection to the launcher closes: a
//! launcher that ends the job, dies or loses the host leaves nothing running there.
//! If the proxy itself is killed, its ranks get SIGKILL from the kernel (parent-death
//! signal). The ranks' output goes straight to the proxy's (the ssh channel's)
//! standard output and error; their standard input is empty.

use crate::pmi::wire::{parse_pmi1, Message};
use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Bounds on what a proxy accepts from its standard input.
const MAX_SPEC_LINE: usize = 1 << 20;
const MAX_SPEC_LINES: usize = 1 << 16;

/// One rank the proxy starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyRank {
    pub rank: u32,
    /// Index into [`ProxySpec::apps`].
    pub app: usize,
    /// Its `PMI_ID`, which the launcher expects once.
    pub id: u64,
    pub local: u32,
    pub nlocal: u32,
}

/// A program of the job: path, arguments, working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyApp {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub wdir: Option<OsString>,
}

/// What one host's proxy starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProxySpec {
    /// The launcher's PMI port, `addr:port`.
    pub pmi: String,
    /// The proxy's own ID on that port.
    pub id: u64,
    pub size: u32,
    pub kvsname: String,
    /// The launcher's working directory (the ranks' unless their app sets one).
    pub cwd: Option<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub apps: Vec<ProxyApp>,
    pub ranks: Vec<ProxyRank>,
}

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s == "-" {
        return Some(Vec::new());
    }
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn os(s: &str) -> Option<OsString> {
    unhex(s).map(OsString::from_vec)
}

impl ProxySpec {
    /// The lines sent to the proxy's standard input, ending with `end`.
    pub fn encode(&self) -> String {
        let h = |o: &OsStr| hex(o.as_bytes());
        let mut s = format!(
            "pmi {}\nid {}\nsize {}\nkvsname {}\n",
            hex(self.pmi.as_bytes()),
            self.id,
            self.size,
            hex(self.kvsname.as_bytes())
        );
        if let Some(c) = &self.cwd {
            s += &format!("cwd {}\n", h(c));
        }
        for (k, v) in &self.env {
            s += &format!("env {} {}\n", h(k), h(v));
        }
        for a in &self.apps {
            s += &format!("app {}", h(&a.program));
            for x in &a.args {
                s += &format!(" {}", h(x));
            }
            s.push('\n');
            if let Some(w) = &a.wdir {
                s += &format!("wdir {}\n", h(w));
            }
        }
        for r in &self.ranks {
            s += &format!(
                "rank {} {} {} {} {}\n",
                r.rank, r.app, r.id, r.local, r.nlocal
            );
        }
        s + "end\n"
    }

    /// Reads a spec up to its `end` line; refuses anything malformed or unbounded.
    pub fn decode(input: &mut impl BufRead) -> Result<ProxySpec, String> {
        let mut spec = ProxySpec::default();
        for n in 1..=MAX_SPEC_LINES {
            let mut line = Vec::new();
            let got = input
                .by_ref()
                .take(MAX_SPEC_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .map_err(|e| format!("reading the job: {e}"))?;
            if got == 0 {
                return Err("the job description ended early".into());
            }
            if line.last() != Some(&b'\n') {
                return Err(format!("job line {n}: too long or unterminated"));
            }
            let text = std::str::from_utf8(&line[..line.len() - 1])
                .map_err(|_| format!("job line {n}: not text"))?;
            let w: Vec<&str> = text.split(' ').collect();
            let bad = || format!("job line {n}: {:?} malformed", w[0]);
            let num = |s: &str| s.parse::<u64>().map_err(|_| bad());
            match (w[0], w.len()) {
                ("end", 1) => {
                    return if spec.pmi.is_empty() || spec.apps.is_empty() {
                        Err("the job description is incomplete".into())
                    } else {
                        Ok(spec)
                    }
                }
                ("pmi", 2) => {
                    spec.pmi = String::from_utf8(unhex(w[1]).ok_or_else(bad)?).map_err(|_| bad())?
                }
                ("id", 2) => spec.id = num(w[1])?,
                ("size", 2) => spec.size = u32::try_from(num(w[1])?).map_err(|_| bad())?,
                ("kvsname", 2) => {
                    spec.kvsname =
                        String::from_utf8(unhex(w[1]).ok_or_else(bad)?).map_err(|_| bad())?
                }
                ("cwd", 2) => spec.cwd = Some(os(w[1]).ok_or_else(bad)?),
                ("env", 3) => spec
                    .env
                    .push((os(w[1]).ok_or_else(bad)?, os(w[2]).ok_or_else(bad)?)),
                ("app", k) if k >= 2 => spec.apps.push(ProxyApp {
                    program: os(w[1]).ok_or_else(bad)?,
                    args: w[2..]
                        .iter()
                        .map(|a| os(a).ok_or_else(bad))
                        .collect::<Result<_, _>>()?,
                    wdir: None,
                }),
                ("wdir", 2) => {
                    spec.apps.last_mut().ok_or_else(bad)?.wdir = Some(os(w[1]).ok_or_else(bad)?)
                }
                ("rank", 6) => {
                    let v: Vec<u64> = w[1..].iter().map(|x| num(x)).collect::<Result<_, _>>()?;
                    let app = usize::try_from(v[1]).map_err(|_| bad())?;
                    let u = |x: u64| u32::try_from(x).map_err(|_| bad());
                    if app >= spec.apps.len() || v[0] >= u64::from(spec.size) {
                        return Err(bad());
                    }
                    spec.ranks.push(ProxyRank {
                        rank: u(v[0])?,
                        app,
                        id: v[2],
                        local: u(v[3])?,
                        nlocal: u(v[4])?,
                    });
                }
                _ => return Err(bad()),
            }
        }
        Err("the job description is too long".into())
    }
}

/// The messages a proxy sends the launcher after its hello.
pub fn exited_msg(rank: u32, raw_status: i32) -> Message {
    Message::new("exited")
        .with("rank", rank)
        .with("status", raw_status)
}

pub fn failed_msg(rank: u32, why: &str) -> Message {
    Message::new("spawn_failed")
        .with("rank", rank)
        .with("error", hex(why.as_bytes()))
}

/// A proxy's report, as the launcher reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    Exited { rank: u32, raw_status: i32 },
    Failed { rank: u32, why: String },
}

/// Parses one report line; `None` for anything else.
pub fn parse_report(m: &Message) -> Option<Report> {
    let rank = u32::try_from(m.get_int("rank")?).ok()?;
    match m.cmd.as_str() {
        "exited" => Some(Report::Exited {
            rank,
            raw_status: i32::try_from(m.get_int("status")?).ok()?,
        }),
        "spawn_failed" => Some(Report::Failed {
            rank,
            why: String::from_utf8_lossy(&unhex(m.get("error")?)?).into_owned(),
        }),
        _ => None,
    }
}

/// Connects to the launcher and says who it is.
fn connect(spec: &ProxySpec) -> Result<TcpStream, String> {
    use std::net::ToSocketAddrs;
    let addr = spec
        .pmi
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| format!("launcher address {}: cannot resolve", spec.pmi))?;
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))
        .map_err(|e| format!("connecting to the launcher at {addr}: {e}"))?;
    s.write_all(
        Message::new("initack")
            .with("pmiid", spec.id)
            .to_pmi1()
            .as_bytes(),
    )
    .map_err(|e| format!("launcher at {addr}: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while line.len() < 256 {
        match s.read(&mut b) {
            Ok(1) if b[0] == b'\n' => break,
            Ok(1) => line.push(b[0]),
            _ => return Err(format!("launcher at {addr} refused this proxy")),
        }
    }
    match parse_pmi1(&line) {
        Ok(m) if m.cmd == "proxy_ok" => {}
        _ => return Err(format!("launcher at {addr} refused this proxy")),
    }
    s.set_read_timeout(None).map_err(|e| e.to_string())?;
    Ok(s)
}

fn spawn(spec: &ProxySpec, r: &ProxyRank) -> Result<Child, String> {
    let app = &spec.apps[r.app];
    let dir = app.wdir.as_ref().or(spec.cwd.as_ref());
    if let Some(d) = dir {
        if !std::path::Path::new(d).is_dir() {
            return Err(format!(
                "working directory {}: no such directory here",
                d.to_string_lossy()
            ));
        }
    }
    let mut cmd = Command::new(&app.program);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    cmd.args(&app.args);
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    cmd.env("PMI_PORT", &spec.pmi)
        .env("PMI_ID", r.id.to_string())
        .env("PMI_RANK", r.rank.to_string())
        .env("PMI_SIZE", spec.size.to_string())
        .env("MPI_LOCALRANKID", r.local.to_string())
        .env("MPI_LOCALNRANKS", r.nlocal.to_string())
        .env("MYRIX_MPI_KVSNAME", &spec.kvsname)
        .env_remove("PMI_FD")
        .env_remove("PMI_JOBID")
        .stdin(Stdio::null());
    // SAFETY: prctl is async-signal-safe; the rank gets SIGKILL if the proxy dies
    // (the proxy forks from its main thread, which lives until it exits).
    unsafe {
        cmd.pre_exec(|| {
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    cmd.spawn().map_err(|e| e.to_string())
}

/// Sets `flag` when `r` reaches its end (or fails).
fn watch_eof(mut r: impl Read + Send + 'static, flag: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        while matches!(r.read(&mut buf), Ok(n) if n > 0) {}
        flag.store(true, Ordering::Relaxed);
    });
}

/// Runs the proxy: reads the job from `input`, starts the ranks, reports, and ends
/// them when `input` or the launcher's connection closes. The process's exit status.
pub fn run(input: impl Read + Send + 'static) -> Result<i32, String> {
    let mut input = BufReader::new(input);
    let spec = ProxySpec::decode(&mut input)?;
    let mut ctl = connect(&spec)?;
    let stop = Arc::new(AtomicBool::new(false));
    watch_eof(input, stop.clone());
    watch_eof(ctl.try_clone().map_err(|e| e.to_string())?, stop.clone());
    let mut kids: Vec<(u32, Child, bool)> = Vec::with_capacity(spec.ranks.len());
    for r in &spec.ranks {
        match spawn(&spec, r) {
            Ok(c) => kids.push((r.rank, c, false)),
            Err(why) => {
                let _ = ctl.write_all(failed_msg(r.rank, &why).to_pmi1().as_bytes());
                for (_, c, _) in &mut kids {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                return Ok(127);
            }
        }
    }
    loop {
        let mut left = 0;
        for (rank, c, done) in kids.iter_mut().filter(|k| !k.2) {
            match c.try_wait() {
                Ok(Some(s)) => {
                    *done = true;
                    let m = exited_msg(*rank, s.into_raw());
                    if ctl.write_all(m.to_pmi1().as_bytes()).is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
                Ok(None) => left += 1,
                Err(_) => *done = true,
            }
        }
        if left == 0 {
            return Ok(0);
        }
        if stop.load(Ordering::Relaxed) {
            for (_, c, done) in kids.iter_mut().filter(|k| !k.2) {
                let _ = c.kill();
                let _ = c.wait();
                *done = true;
            }
            return Ok(0);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> ProxySpec {
        ProxySpec {
            pmi: "10.0.0.1:4242".into(),
            id: 77,
            size: 4,
            kvsname: "myrix_1_0".into(),
            cwd: Some("/tmp/a b".into()),
            env: vec![("MYRIX_X".into(), "x y\nz".into()), ("E".into(), "".into())],
            apps: vec![ProxyApp {
                program: "./p".into(),
                args: vec!["".into(), "-c".into(), "a b".into()],
                wdir: Some("/".into()),
            }],
            ranks: vec![ProxyRank {
                rank: 3,
                app: 0,
                id: 1 << 61,
                local: 1,
                nlocal: 2,
            }],
        }
    }

    #[test]
    fn a_spec_survives_its_encoding() {
        let s = sample();
        let text = s.encode();
        assert_eq!(ProxySpec::decode(&mut text.as_bytes()).unwrap(), s);
        // What follows `end` is left unread.
        let more = format!("{text}trailing");
        let mut r = more.as_bytes();
        ProxySpec::decode(&mut r).unwrap();
        assert_eq!(r, b"trailing");
        // A rank outside the job, an unknown app, a cut-off description: refused.
        for bad in [
            text.replace("rank 3 ", "rank 4 "),
            text.replace("rank 3 0 ", "rank 3 1 "),
            text.replace("end\n", ""),
            text.replace("size 4", "size x"),
        ] {
            assert!(ProxySpec::decode(&mut bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn reports_round_trip() {
        let m = parse_pmi1(exited_msg(5, 9).to_pmi1().as_bytes()).unwrap();
        assert_eq!(
            parse_report(&m),
            Some(Report::Exited {
                rank: 5,
                raw_status: 9
            })
        );
        let why = "starting ./p: No such file or directory (os error 2)";
        let m = parse_pmi1(failed_msg(1, why).to_pmi1().as_bytes()).unwrap();
        assert_eq!(
            parse_report(&m),
            Some(Report::Failed {
                rank: 1,
                why: why.into()
            })
        );
        assert_eq!(parse_report(&Message::new("exited")), None);
    }

    proptest! {
        #[test]
        fn any_input_is_decoded_or_refused(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = ProxySpec::decode(&mut bytes.as_slice());
        }

        #[test]
        fn lines_of_known_words_never_panic(words in proptest::collection::vec("(end|pmi|id|size|app|wdir|rank|env|cwd|kvsname)( [0-9a-f-]{0,6}){0,6}", 0..12)) {
            let text = words.join("\n") + "\n";
            let _ = ProxySpec::decode(&mut text.as_bytes());
        }
    }
}
