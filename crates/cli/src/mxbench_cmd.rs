//! `myrix bench pingpong|stream`: MX between two processes, OSU-style.
//!
//! `--server` opens an endpoint and prints its address as the first line of standard
//! output; `--client ADDR` connects to it, sends the plan (lengths, iterations, …) as a
//! control message, runs it and prints the results. With neither flag the command spawns
//! the server itself. Lengths above 64 KiB run a tenth of the iterations (as OSU does).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use myrix_mx::{Code, Endpoint, EndpointAddr, MxError, PeerId, RecvBuf};

use crate::CliError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Pingpong,
    Stream,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Args, Clone)]
pub struct MxBenchArgs {
    /// Open an endpoint, print its address, and serve one client.
    #[arg(long, conflicts_with = "client")]
    server: bool,
    /// Where the server listens (udp: HOST:PORT; default 127.0.0.1, any port).
    #[arg(long, requires = "server")]
    listen: Option<String>,
    /// The server's address (the first line it printed).
    #[arg(long)]
    client: Option<String>,
    #[arg(long, default_value = "shm", value_parser = ["shm", "udp", "eth"])]
    transport: String,
    /// The network interface of `--transport eth` (raw Ethernet, needs root), on this
    /// side: server or client.
    #[arg(long, default_value = "lo")]
    interface: String,
    /// First message length, bytes.
    #[arg(long, default_value_t = 1)]
    start: usize,
    /// Last message length, bytes.
    #[arg(long, default_value_t = 1 << 20)]
    end: usize,
    /// Next length = length × this (default 2).
    #[arg(long, conflicts_with = "increment")]
    multiplier: Option<usize>,
    /// Next length = length + this.
    #[arg(long)]
    increment: Option<usize>,
    /// Timed round trips (pingpong) or windows (stream) per length.
    #[arg(long, default_value_t = 1000)]
    iterations: usize,
    /// Untimed ones before them.
    #[arg(long, default_value_t = 100)]
    warmup: usize,
    /// Messages in flight per window (stream).
    #[arg(long, default_value_t = 64)]
    window: usize,
    /// Check every byte of every message (slower: not for timing).
    #[arg(long)]
    verify: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Pin to CPUs: `A,B` puts the server on A and the client on B.
    #[arg(long)]
    cpu: Option<String>,
    /// At the end, print the endpoint's protocol counters on standard error (frames,
    /// resends, duplicates dropped, frames that arrived early and were held).
    #[arg(long)]
    stats: bool,
}

const KEY: u32 = 0x6d79_7278;
const CTRL: u64 = 1 << 63;
const HELLO: u64 = CTRL | 1;
const BYE: u64 = CTRL | 2;
/// How long a server on a lossy transport keeps answering after the goodbye: many
/// resend intervals (20 ms), so a lost acknowledgement is repeated.
const LINGER: Duration = Duration::from_millis(300);
const ACK: u64 = CTRL | 3;
const DATA: u64 = 7;
const T: Duration = Duration::from_secs(30);

fn mx(e: MxError) -> CliError {
    CliError::Found(format!("MX: {e}"))
}

#[derive(Debug, Clone, PartialEq)]
struct Plan {
    mode: Mode,
    lengths: Vec<usize>,
    iterations: usize,
    warmup: usize,
    window: usize,
    verify: bool,
}

impl Plan {
    fn encode(&self) -> String {
        let lens: Vec<String> = self.lengths.iter().map(|l| l.to_string()).collect();
        format!(
            "{} {} {} {} {} {}",
            match self.mode {
                Mode::Pingpong => "pingpong",
                Mode::Stream => "stream",
            },
            lens.join(","),
            self.iterations,
            self.warmup,
            self.window,
            self.verify as u8
        )
    }
    /// Parses a client's plan: input from the network, so every field is checked.
    fn decode(s: &str) -> Option<Plan> {
        let f: Vec<&str> = s.split_whitespace().collect();
        if f.len() != 6 {
            return None;
        }
        let mode = match f[0] {
            "pingpong" => Mode::Pingpong,
            "stream" => Mode::Stream,
            _ => return None,
        };
        let lengths = f[1]
            .split(',')
            .map(|x| x.parse::<usize>().ok().filter(|&l| l <= MAX_LEN))
            .collect::<Option<Vec<_>>>()?;
        let num = |x: &str| x.parse::<usize>().ok().filter(|&n| n <= 100_000_000);
        Some(Plan {
            mode,
            lengths,
            iterations: num(f[2])?,
            warmup: num(f[3])?,
            window: num(f[4]).filter(|&w| (1..=1024).contains(&w))?,
            verify: f[5] == "1",
        })
    }
    fn iters(&self, len: usize) -> (usize, usize) {
        if len > 64 * 1024 {
            (
                (self.iterations / 10).max(1),
                (self.warmup / 10).max(usize::from(self.warmup > 0)),
            )
        } else {
            (self.iterations.max(1), self.warmup)
        }
    }
}

const MAX_LEN: usize = 64 << 20;

fn lengths(a: &MxBenchArgs) -> Result<Vec<usize>, CliError> {
    if a.end > MAX_LEN {
        return Err(CliError::Input(format!(
            "--end {}: at most {MAX_LEN} bytes",
            a.end
        )));
    }
    if a.start > a.end {
        return Err(CliError::Input(format!(
            "--start {} is above --end {}",
            a.start, a.end
        )));
    }
    let mut v = vec![a.start];
    loop {
        let l = *v.last().expect("non-empty");
        let next = match (a.increment, a.multiplier) {
            (Some(0), _) => return Err(CliError::Input("--increment must be positive".into())),
            (Some(i), _) => l + i,
            (None, Some(m)) if m < 2 => {
                return Err(CliError::Input("--multiplier must be at least 2".into()))
            }
            (None, m) => {
                if l == 0 {
                    1
                } else {
                    l * m.unwrap_or(2)
                }
            }
        };
        if next > a.end {
            break;
        }
        v.push(next);
    }
    Ok(v)
}

fn pattern(buf: &mut [u8], len: usize, i: usize) {
    for (k, b) in buf.iter_mut().enumerate() {
        *b = (k.wrapping_mul(7) ^ i.wrapping_mul(13) ^ len) as u8;
    }
}

fn check(buf: &[u8], len: usize, i: usize) -> Result<(), CliError> {
    for (k, &b) in buf.iter().enumerate() {
        if b != (k.wrapping_mul(7) ^ i.wrapping_mul(13) ^ len) as u8 {
            return Err(CliError::Found(format!(
                "verify: length {len}, message {i}: byte {k} is {b:#04x}"
            )));
        }
    }
    Ok(())
}

fn parse_cpus(s: &str) -> Result<(usize, usize), CliError> {
    let bad = || CliError::Input(format!("--cpu '{s}': expected SERVER,CLIENT core numbers"));
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    Ok((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}

fn pin(cpu: usize) -> Result<(), CliError> {
    myrix_mx::pin_to_cpu(cpu).map_err(|e| CliError::Input(format!("--cpu {cpu}: {e}")))
}

/// Opens an endpoint on `board`, taking the first free endpoint id for shm.
fn open(board: &str) -> Result<Endpoint, CliError> {
    if board == "shm" {
        let mut last = None;
        for id in 0..=255u8 {
            match Endpoint::open(board, id, KEY) {
                Ok(e) => return Ok(e),
                Err(MxError::Io(e)) if e.kind() == std::io::ErrorKind::AddrInUse => last = Some(e),
                Err(e) => return Err(mx(e)),
            }
        }
        return Err(CliError::Found(format!(
            "no free shared-memory endpoint: {}",
            last.map(|e| e.to_string()).unwrap_or_default()
        )));
    }
    Endpoint::open(board, 0, KEY).map_err(mx)
}

fn send(ep: &mut Endpoint, peer: myrix_mx::PeerId, data: &[u8]) -> Result<(), CliError> {
    match ep.send(peer, &[data], DATA, T) {
        Ok(st) if st.code == Code::Success => Ok(()),
        Ok(st) => Err(CliError::Found(format!("MX send failed: {:?}", st.code))),
        Err(MxError::Timeout) => Err(CliError::Found("the peer stopped answering (30 s)".into())),
        Err(e) => Err(mx(e)),
    }
}

/// A blocking receive of the next data message (`MPI_Recv`).
fn recv(ep: &mut Endpoint, buf: RecvBuf) -> Result<RecvBuf, CliError> {
    match ep.recv(buf, DATA, u64::MAX, T) {
        Ok((st, b)) if st.code == Code::Success => Ok(b),
        Ok((st, _)) => Err(CliError::Found(format!("MX receive failed: {:?}", st.code))),
        Err(MxError::Timeout) => Err(CliError::Found("the peer stopped answering (30 s)".into())),
        Err(e) => Err(mx(e)),
    }
}

fn wait(ep: &mut Endpoint, r: myrix_mx::Request) -> Result<myrix_mx::Completion, CliError> {
    match ep.wait(r, T).map_err(mx)? {
        Some(c) if c.0.code == Code::Success => Ok(c),
        Some(c) => Err(CliError::Found(format!(
            "MX request failed: {:?}",
            c.0.code
        ))),
        None => Err(CliError::Found("the peer stopped answering (30 s)".into())),
    }
}

pub fn run(mode: Mode, a: MxBenchArgs) -> Result<(), CliError> {
    let cpus = a.cpu.as_deref().map(parse_cpus).transpose()?;
    if a.transport == "eth" {
        let name = &a.interface;
        let plain = !name.is_empty() && !name.contains('/') && !name.starts_with('.');
        if !plain || !std::path::Path::new("/sys/class/net").join(name).exists() {
            return Err(CliError::Input(format!(
                "--interface: no network interface '{name}'"
            )));
        }
    }
    if a.server {
        if let Some((s, _)) = cpus {
            pin(s)?;
        }
        return serve(&a);
    }
    let plan = Plan {
        mode,
        lengths: lengths(&a)?,
        iterations: a.iterations,
        warmup: a.warmup,
        window: a.window.clamp(1, 1024),
        verify: a.verify,
    };
    if a.window == 0 || a.window > 1024 {
        return Err(CliError::Input("--window: 1 to 1024".into()));
    }
    let (addr, child) = match &a.client {
        Some(addr) => (addr.clone(), None),
        None => spawn_server(&a, mode)?,
    };
    let result = (|| {
        if let Some((_, c)) = cpus {
            pin(c)?;
        }
        let addr: EndpointAddr = addr
            .trim()
            .parse()
            .map_err(|e: myrix_mx::AddrError| CliError::Input(e.to_string()))?;
        let board = match addr.transport() {
            "shm" => "shm".to_string(),
            "udp" if addr.location().starts_with('[') => "udp:[::]:0".to_string(),
            "udp" => "udp:0.0.0.0:0".to_string(),
            "eth" => format!("eth:{}", a.interface),
            t => {
                return Err(CliError::Input(format!(
                    "transport '{t}' cannot be benchmarked"
                )))
            }
        };
        let mut ep = open(&board)?;
        let peer = ep.connect(&addr, KEY, T).map_err(mx)?;
        client(&mut ep, peer, &plan, &a)
    })();
    if let Some(mut c) = child {
        if result.is_err() {
            let _ = c.kill();
        }
        let _ = c.wait();
    }
    result
}

fn spawn_server(a: &MxBenchArgs, mode: Mode) -> Result<(String, Option<Child>), CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Found(format!("cannot find my own executable: {e}")))?;
    let mut cmd = Command::new(exe);
    cmd.arg("bench")
        .arg(match mode {
            Mode::Pingpong => "pingpong",
            Mode::Stream => "stream",
        })
        .arg("--server")
        .arg("--transport")
        .arg(&a.transport)
        .arg("--interface")
        .arg(&a.interface);
    if let Some(c) = &a.cpu {
        cmd.arg("--cpu").arg(c);
    }
    if a.stats {
        cmd.arg("--stats");
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| CliError::Found(format!("cannot start the server: {e}")))?;
    let mut line = String::new();
    let out = child.stdout.take().expect("piped");
    BufReader::new(out)
        .read_line(&mut line)
        .map_err(|e| CliError::Found(format!("server: {e}")))?;
    if line.trim().is_empty() {
        let _ = child.wait();
        return Err(CliError::Found("the server printed no address".into()));
    }
    Ok((line.trim().to_string(), Some(child)))
}

fn serve(a: &MxBenchArgs) -> Result<(), CliError> {
    let board = match (a.transport.as_str(), &a.listen) {
        ("shm", None) => "shm".to_string(),
        ("shm", Some(_)) => {
            return Err(CliError::Input(
                "--listen is for udp; shm endpoints are found by name".into(),
            ))
        }
        ("eth", None) => format!("eth:{}", a.interface),
        ("eth", Some(_)) => {
            return Err(CliError::Input(
                "--listen is for udp; with eth, name the interface with --interface".into(),
            ))
        }
        (_, Some(l)) if l.starts_with("udp:") => l.clone(),
        (_, Some(l)) => format!("udp:{l}"),
        (_, None) => "udp:127.0.0.1:0".to_string(),
    };
    let mut ep = open(&board)?;
    outln!("{}", ep.addr());
    // The client connects, then says what to run.
    let r = ep
        .irecv(RecvBuf::One(vec![0; 4096]), HELLO, u64::MAX, 0)
        .map_err(mx)?;
    let (st, buf) = loop {
        if let Some(c) = ep.wait(r, Duration::from_secs(3600)).map_err(mx)? {
            break c;
        }
    };
    let text = buf.map(|b| b.to_vec()).unwrap_or_default();
    let text = String::from_utf8_lossy(&text[..st.xfer_len]).to_string();
    let plan = Plan::decode(&text)
        .ok_or_else(|| CliError::Found(format!("bad plan from client: {text:?}")))?;
    let peer = st.source;
    run_plan(&mut ep, peer, &plan, false)?;
    let r = ep
        .irecv(RecvBuf::One(vec![]), BYE, u64::MAX, 0)
        .map_err(mx)?;
    wait(&mut ep, r)?;
    ep.flush_all(Duration::from_secs(2)).map_err(mx)?;
    if !ep.config().reliable_transport {
        // Our acknowledgement of the goodbye may be lost, and the client resends it
        // until one arrives: stay a while to answer (as TCP's TIME-WAIT does), or the
        // client would find us gone and report the peer unreachable.
        let end = std::time::Instant::now() + LINGER;
        while std::time::Instant::now() < end {
            ep.progress().map_err(mx)?;
        }
    }
    if a.stats {
        print_stats("server", &ep);
    }
    Ok(())
}

/// One line of `key=value` counters, for people and for the namespace test.
fn print_stats(side: &str, ep: &Endpoint) {
    let s = ep.stats();
    // One write, so the server's line and the client's do not interleave.
    let line = format!(
        "stats {side}: frames_in={} frames_out={} retransmits={} duplicates={} early_held={} \
         bad_frames={} stale_frames={} acks_sent={} pull_rerequests={}\n",
        s.frames_in,
        s.frames_out,
        s.retransmits,
        s.duplicates,
        s.early_held,
        s.bad_frames,
        s.stale_frames,
        s.acks_sent,
        s.pull_rerequests
    );
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

struct Row {
    length: usize,
    latency_us: f64,
    bandwidth_mb_s: f64,
}

fn client(ep: &mut Endpoint, peer: PeerId, plan: &Plan, a: &MxBenchArgs) -> Result<(), CliError> {
    let hello = plan.encode();
    let s = ep.isend(peer, &[hello.as_bytes()], HELLO, 0).map_err(mx)?;
    wait(ep, s)?;
    let rows = run_plan(ep, peer, plan, true)?;
    let s = ep.isend(peer, &[], BYE, 0).map_err(mx)?;
    wait(ep, s)?;
    ep.flush_all(Duration::from_secs(2)).map_err(mx)?;
    if a.stats {
        print_stats("client", ep);
    }
    match a.format {
        Format::Table => {
            outln!(
                "# myrix bench {}: MX over {}, {} iterations ({} warm-up) per length{}",
                if plan.mode == Mode::Pingpong {
                    "pingpong"
                } else {
                    "stream"
                },
                a.transport,
                plan.iterations,
                plan.warmup,
                if plan.verify {
                    ", every byte verified"
                } else {
                    ""
                }
            );
            outln!(
                "{:>10} {:>12} {:>14}",
                "length",
                "latency_us",
                "bandwidth_MB/s"
            );
            for r in &rows {
                outln!(
                    "{:>10} {:>12.3} {:>14.1}",
                    r.length,
                    r.latency_us,
                    r.bandwidth_mb_s
                );
            }
        }
        Format::Json => {
            let v: Vec<serde_json::Value> = rows
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "length": r.length,
                        "latency_us": r.latency_us,
                        "bandwidth_mb_s": r.bandwidth_mb_s,
                    })
                })
                .collect();
            outln!("{}", serde_json::Value::Array(v));
        }
    }
    Ok(())
}

/// Runs the plan on either side; the client's side returns the measurements.
fn run_plan(
    ep: &mut Endpoint,
    peer: PeerId,
    plan: &Plan,
    is_client: bool,
) -> Result<Vec<Row>, CliError> {
    let mut rows = Vec::new();
    let max = plan.lengths.iter().copied().max().unwrap_or(0);
    let mut sbuf = vec![0u8; max];
    let mut rbuf = Some(RecvBuf::One(vec![0u8; max]));
    for &len in &plan.lengths {
        let (iters, warm) = plan.iters(len);
        let mut start = Instant::now();
        match plan.mode {
            Mode::Pingpong => {
                for i in 0..warm + iters {
                    if i == warm {
                        start = Instant::now();
                    }
                    let mut buf = rbuf.take().expect("buffer returned");
                    if let RecvBuf::One(v) = &mut buf {
                        v.resize(len, 0);
                    }
                    if plan.verify {
                        pattern(&mut sbuf[..len], len, i);
                    }
                    // As an MPI ping-pong does (MPI_Send, MPI_Recv): a blocking send, which
                    // reads a large message in place, then a blocking receive.
                    if is_client {
                        send(ep, peer, &sbuf[..len])?;
                        rbuf = Some(recv(ep, buf)?);
                    } else {
                        rbuf = Some(recv(ep, buf)?);
                        send(ep, peer, &sbuf[..len])?;
                    }
                    if plan.verify {
                        if let Some(RecvBuf::One(v)) = &rbuf {
                            check(&v[..len], len, i)?;
                        }
                    }
                }
                let secs = start.elapsed().as_secs_f64();
                let one_way = secs / iters as f64 / 2.0;
                rows.push(Row {
                    length: len,
                    latency_us: one_way * 1e6,
                    bandwidth_mb_s: len as f64 / one_way / 1e6,
                });
            }
            Mode::Stream => {
                let w = plan.window;
                let mut bufs: Vec<RecvBuf> = (0..w).map(|_| RecvBuf::One(vec![0u8; len])).collect();
                // A large message goes as a vector the endpoint takes and hands back, so
                // the window is sent without copies into the requests (as MPI_Isend).
                let lend = len > ep.config().medium_max;
                let mut svecs: Vec<Vec<u8>> = if lend && is_client {
                    (0..w).map(|_| vec![0u8; len]).collect()
                } else {
                    Vec::new()
                };
                for i in 0..warm + iters {
                    if i == warm {
                        start = Instant::now();
                    }
                    if is_client {
                        let mut reqs = Vec::with_capacity(w);
                        let ack = ep
                            .irecv(RecvBuf::One(vec![0; 4]), ACK, u64::MAX, 0)
                            .map_err(mx)?;
                        for k in 0..w {
                            if lend {
                                let mut v = svecs.pop().expect("one vector per window slot");
                                if plan.verify {
                                    pattern(&mut v, len, i * w + k);
                                }
                                reqs.push(ep.isend_vec(peer, v, DATA, 0).map_err(mx)?);
                                continue;
                            }
                            if plan.verify {
                                pattern(&mut sbuf[..len], len, i * w + k);
                            }
                            reqs.push(ep.isend(peer, &[&sbuf[..len]], DATA, 0).map_err(mx)?);
                        }
                        for s in reqs {
                            if let (_, Some(RecvBuf::One(v))) = wait(ep, s)? {
                                svecs.push(v);
                            }
                        }
                        wait(ep, ack)?;
                    } else {
                        let mut reqs = Vec::with_capacity(w);
                        for b in bufs.drain(..) {
                            reqs.push(ep.irecv(b, DATA, u64::MAX, 0).map_err(mx)?);
                        }
                        for (k, r) in reqs.into_iter().enumerate() {
                            let (_, b) = wait(ep, r)?;
                            let b = b.expect("receive buffer");
                            if plan.verify {
                                if let RecvBuf::One(v) = &b {
                                    check(&v[..len], len, i * w + k)?;
                                }
                            }
                            bufs.push(b);
                        }
                        let s = ep.isend(peer, &[b"ack!"], ACK, 0).map_err(mx)?;
                        wait(ep, s)?;
                    }
                }
                let secs = start.elapsed().as_secs_f64();
                let per_msg = secs / (iters * w) as f64;
                rows.push(Row {
                    length: len,
                    latency_us: per_msg * 1e6,
                    bandwidth_mb_s: len as f64 / per_msg / 1e6,
                });
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_round_trips_and_rejects_garbage() {
        let p = Plan {
            mode: Mode::Stream,
            lengths: vec![1, 2, 4],
            iterations: 10,
            warmup: 1,
            window: 8,
            verify: true,
        };
        assert_eq!(Plan::decode(&p.encode()), Some(p));
        for bad in [
            "",
            "pingpong 1 2 3 4",
            "walk 1 1 1 1 1",
            "stream 1,x 1 1 1 1",
            "stream 1 1 1 0 1",
        ] {
            assert_eq!(Plan::decode(bad), None, "{bad}");
        }
    }
}
