//! The MX benchmark protocol between two processes, OSU-style: ping-pong (one-way
//! latency and bandwidth per length) and stream (windows of messages, then an ack).
//!
//! The server opens an endpoint (its address is the caller's to publish); the client
//! connects, sends the [`Plan`] as a control message, both sides run it and the client
//! measures. Lengths above 64 KiB run a tenth of the iterations (as OSU does).
//!
//! It owns the protocol over `myrix_mx::Endpoint`: the plan and its wire text, the
//! length ladder, the data pattern and its check, the timed loops. It never prints,
//! never parses arguments and never starts processes. The timed loops reuse their
//! buffers and request lists: nothing is allocated per message.

use crate::LabError;
use myrix_mx::engine::Codec;
use myrix_mx::{
    Code, Completion, Endpoint, EndpointAddr, MxError, OmxEndpoint, OmxMxWireEndpoint, PeerId,
    RecvBuf, Request,
};
use std::time::{Duration, Instant};

/// The connection key both sides use.
pub const KEY: u32 = 0x6d79_7278;
const CTRL: u64 = 1 << 63;
const HELLO: u64 = CTRL | 1;
const BYE: u64 = CTRL | 2;
const ACK: u64 = CTRL | 3;
/// The server's answer to a plan it takes: a server busy with another client leaves a
/// second client's plan unread, and that client stops after [`WELCOME`].
const READY: u64 = CTRL | 4;
const DATA: u64 = 7;
/// How long a server on a lossy transport keeps answering after the goodbye: many
/// resend intervals (20 ms), so a lost acknowledgement is repeated.
const LINGER: Duration = Duration::from_millis(300);
/// How long either side waits for the other before giving up.
const T: Duration = Duration::from_secs(30);
/// How long a client waits for the server to take its plan: a server that does not is
/// serving another client (it answers at once otherwise).
pub const WELCOME: Duration = Duration::from_secs(2);
/// The longest message length, bytes.
pub const MAX_LEN: usize = 64 << 20;
/// The most iterations (and warm-up iterations) per length a plan may ask for.
pub const MAX_ITERATIONS: usize = 100_000_000;

/// Ping-pong or stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pingpong,
    Stream,
}

impl Mode {
    /// `pingpong` or `stream`, as in the plan and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Pingpong => "pingpong",
            Mode::Stream => "stream",
        }
    }
}

fn mx(e: MxError) -> LabError {
    LabError::Failed(format!("MX: {e}"))
}

/// What both sides run, sent by the client as text.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub mode: Mode,
    pub lengths: Vec<usize>,
    /// Timed round trips (pingpong) or windows (stream) per length.
    pub iterations: usize,
    /// Untimed ones before them.
    pub warmup: usize,
    /// Messages in flight per window (stream), 1 to 1024.
    pub window: usize,
    /// Check every byte of every message.
    pub verify: bool,
}

impl Plan {
    /// The plan's wire text: `MODE L1,L2,… ITERATIONS WARMUP WINDOW VERIFY`.
    pub fn encode(&self) -> String {
        let lens: Vec<String> = self.lengths.iter().map(|l| l.to_string()).collect();
        format!(
            "{} {} {} {} {} {}",
            self.mode.name(),
            lens.join(","),
            self.iterations,
            self.warmup,
            self.window,
            self.verify as u8
        )
    }

    /// Parses a client's plan: input from the network, so every field is checked.
    pub fn decode(s: &str) -> Option<Plan> {
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
        let num = |x: &str| x.parse::<usize>().ok().filter(|&n| n <= MAX_ITERATIONS);
        Some(Plan {
            mode,
            lengths,
            iterations: num(f[2])?,
            warmup: num(f[3])?,
            window: num(f[4]).filter(|&w| (1..=1024).contains(&w))?,
            verify: f[5] == "1",
        })
    }

    /// (timed, warm-up) iterations for a length: a tenth above 64 KiB.
    pub fn iters(&self, len: usize) -> (usize, usize) {
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

/// The lengths from `start` to `end`: each the last plus `increment`, or else times
/// `multiplier` (default 2; 0 is followed by 1).
pub fn lengths(
    start: usize,
    end: usize,
    increment: Option<usize>,
    multiplier: Option<usize>,
) -> Result<Vec<usize>, LabError> {
    if end > MAX_LEN {
        return Err(LabError::Invalid(format!(
            "--end {end}: at most {MAX_LEN} bytes"
        )));
    }
    if start > end {
        return Err(LabError::Invalid(format!(
            "--start {start} is above --end {end}"
        )));
    }
    let mut v = vec![start];
    loop {
        let l = *v.last().expect("non-empty");
        let next = match (increment, multiplier) {
            (Some(0), _) => return Err(LabError::Invalid("--increment must be positive".into())),
            (Some(i), _) => l + i,
            (None, Some(m)) if m < 2 => {
                return Err(LabError::Invalid("--multiplier must be at least 2".into()))
            }
            (None, m) => {
                if l == 0 {
                    1
                } else {
                    l * m.unwrap_or(2)
                }
            }
        };
        if next > end {
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

fn check(buf: &[u8], len: usize, i: usize) -> Result<(), LabError> {
    for (k, &b) in buf.iter().enumerate() {
        if b != (k.wrapping_mul(7) ^ i.wrapping_mul(13) ^ len) as u8 {
            return Err(LabError::Failed(format!(
                "verify: length {len}, message {i}: byte {k} is {b:#04x}"
            )));
        }
    }
    Ok(())
}

/// Opens an endpoint on `board`, taking the first free endpoint id for shm.
pub fn open(board: &str) -> Result<Endpoint, LabError> {
    if board == "shm" {
        let mut last = None;
        for id in 0..=255u8 {
            match Endpoint::open(board, id, KEY) {
                Ok(e) => return Ok(e),
                Err(MxError::Io(e)) if e.kind() == std::io::ErrorKind::AddrInUse => last = Some(e),
                Err(e) => return Err(mx(e)),
            }
        }
        return Err(LabError::Failed(format!(
            "no free shared-memory endpoint: {}",
            last.map(|e| e.to_string()).unwrap_or_default()
        )));
    }
    Endpoint::open(board, 0, KEY).map_err(mx)
}

/// The client's endpoint id on raw Ethernet: its NIC id is the interface's MAC, so on
/// one interface (`lo`) the client and the server (id 0) must differ by their id.
const CLIENT_ETH_ID: u8 = 1;

/// The server's board: shm; raw Ethernet on `interface`; or UDP on `listen`
/// (`HOST:PORT`, default 127.0.0.1 and any port).
pub fn server_board(
    transport: &str,
    listen: Option<&str>,
    interface: &str,
) -> Result<String, LabError> {
    Ok(match (transport, listen) {
        ("shm", None) => "shm".to_string(),
        ("shm", Some(_)) => {
            return Err(LabError::Invalid(
                "--listen is for udp; shm endpoints are found by name".into(),
            ))
        }
        ("eth", None) => format!("eth:{interface}"),
        ("omx", None) => format!("omx:{interface}"),
        ("eth" | "omx", Some(_)) => {
            return Err(LabError::Invalid(
                "--listen is for udp; with eth, name the interface with --interface".into(),
            ))
        }
        (_, Some(l)) if l.starts_with("udp:") => l.to_string(),
        (_, Some(l)) => format!("udp:{l}"),
        (_, None) => "udp:127.0.0.1:0".to_string(),
    })
}

/// Opens the client's endpoint (on the server's transport; raw Ethernet on
/// `interface`) and connects to the server at `addr`, the text it published.
pub fn connect(addr: &str, interface: &str) -> Result<(Endpoint, PeerId), LabError> {
    let addr: EndpointAddr = addr
        .trim()
        .parse()
        .map_err(|e: myrix_mx::AddrError| LabError::Invalid(e.to_string()))?;
    let board = match addr.transport() {
        "shm" => "shm".to_string(),
        "udp" if addr.location().starts_with('[') => "udp:[::]:0".to_string(),
        "udp" => "udp:0.0.0.0:0".to_string(),
        "eth" => format!("eth:{interface}"),
        t => {
            return Err(LabError::Invalid(format!(
                "transport '{t}' cannot be benchmarked"
            )))
        }
    };
    let mut ep = if board.starts_with("eth:") {
        Endpoint::open(&board, CLIENT_ETH_ID, KEY).map_err(mx)?
    } else {
        open(&board)?
    };
    let peer = ep.connect(&addr, KEY, T).map_err(mx)?;
    Ok((ep, peer))
}

/// Opens an endpoint on an `omx:IFNAME` board (Open-MX's frames on raw Ethernet, its
/// default wire mode).
pub fn open_omx(board: &str) -> Result<OmxEndpoint, LabError> {
    OmxEndpoint::open_omx(board, 0, KEY).map_err(mx)
}

/// [`open_omx`] in Open-MX's MX-compatible wire mode (4 KiB medium fragments, a
/// 4144-byte MTU: Open-MX built with `--enable-mx-wire`).
pub fn open_omx_mx(board: &str) -> Result<OmxMxWireEndpoint, LabError> {
    OmxMxWireEndpoint::open_omx(board, 0, KEY).map_err(mx)
}

/// [`connect`] for a server on an `omx:` board, from `interface`.
pub fn connect_omx(addr: &str, interface: &str) -> Result<(OmxEndpoint, PeerId), LabError> {
    connect_omx_with(addr, interface, OmxEndpoint::open_omx)
}

/// [`connect_omx`] in the MX-compatible wire mode: the server must be in it too (an
/// address does not say which mode its endpoint speaks).
pub fn connect_omx_mx(
    addr: &str,
    interface: &str,
) -> Result<(OmxMxWireEndpoint, PeerId), LabError> {
    connect_omx_with(addr, interface, OmxMxWireEndpoint::open_omx)
}

type OpenFn<C> = fn(&str, u8, u32) -> Result<Endpoint<C>, MxError>;

fn connect_omx_with<C: Codec>(
    addr: &str,
    interface: &str,
    open: OpenFn<C>,
) -> Result<(Endpoint<C>, PeerId), LabError> {
    let addr: EndpointAddr = addr
        .trim()
        .parse()
        .map_err(|e: myrix_mx::AddrError| LabError::Invalid(e.to_string()))?;
    if addr.transport() != "omx" {
        return Err(LabError::Invalid(format!(
            "{addr}: not an Open-MX (omx:) endpoint"
        )));
    }
    let board = format!("omx:{interface}");
    let mut ep = open(&board, CLIENT_ETH_ID, KEY).map_err(mx)?;
    let peer = ep.connect(&addr, KEY, T).map_err(mx)?;
    Ok((ep, peer))
}

fn send<C: Codec>(ep: &mut Endpoint<C>, peer: PeerId, data: &[u8]) -> Result<(), LabError> {
    match ep.send(peer, &[data], DATA, T) {
        Ok(st) if st.code == Code::Success => Ok(()),
        Ok(st) => Err(LabError::Failed(format!("MX send failed: {}", st.code))),
        Err(MxError::Timeout) => Err(LabError::Failed("the peer stopped answering (30 s)".into())),
        Err(e) => Err(mx(e)),
    }
}

/// How long a wait lasts before it asks whether the peer is still there.
const SLICE: Duration = Duration::from_millis(20);

fn gone() -> LabError {
    LabError::Failed("the peer is gone (its process ended or stopped answering)".into())
}

/// A blocking receive of the next data message (`MPI_Recv`) from `peer`; a peer found
/// gone ends it at once instead of after the whole timeout.
fn recv<C: Codec>(ep: &mut Endpoint<C>, peer: PeerId, buf: RecvBuf) -> Result<RecvBuf, LabError> {
    match ep.recv_from(peer, buf, DATA, u64::MAX, T) {
        Ok((st, b)) if st.code == Code::Success => Ok(b),
        Ok((st, _)) => Err(LabError::Failed(format!("MX receive failed: {}", st.code))),
        Err(MxError::PeerLost) => Err(gone()),
        Err(MxError::Timeout) => Err(LabError::Failed("the peer stopped answering (30 s)".into())),
        Err(e) => Err(mx(e)),
    }
}

/// Waits for request `r`, which involves `peer`, in slices as [`recv`] does.
fn wait<C: Codec>(ep: &mut Endpoint<C>, peer: PeerId, r: Request) -> Result<Completion, LabError> {
    wait_within(ep, peer, r, T)?
        .ok_or_else(|| LabError::Failed("the peer stopped answering (30 s)".into()))
}

/// [`wait`] for at most `limit`: `None` if `r` is still pending then.
fn wait_within<C: Codec>(
    ep: &mut Endpoint<C>,
    peer: PeerId,
    r: Request,
    limit: Duration,
) -> Result<Option<Completion>, LabError> {
    let end = Instant::now() + limit;
    loop {
        let slice = SLICE.min(end.saturating_duration_since(Instant::now()));
        match ep.wait(r, slice).map_err(mx)? {
            Some(c) if c.0.code == Code::Success => return Ok(Some(c)),
            Some(c) => return Err(LabError::Failed(format!("MX request failed: {}", c.0.code))),
            None => {}
        }
        if ep.peer_lost(peer) {
            return Err(gone());
        }
        if Instant::now() >= end {
            return Ok(None);
        }
    }
}

/// Serves one client on `ep` (whose address the caller has published): receives the
/// plan, runs it, says goodbye.
pub fn serve<C: Codec>(ep: &mut Endpoint<C>) -> Result<(), LabError> {
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
        .ok_or_else(|| LabError::Failed(format!("bad plan from client: {text:?}")))?;
    let peer = st.source;
    let s = ep.isend(peer, &[b"ready"], READY, 0).map_err(mx)?;
    wait(ep, peer, s)?;
    run_plan(ep, peer, &plan, false, &mut |_| {})?;
    let r = ep
        .irecv(RecvBuf::One(vec![]), BYE, u64::MAX, 0)
        .map_err(mx)?;
    wait(ep, peer, r)?;
    ep.flush_all(Duration::from_secs(2)).map_err(mx)?;
    if !ep.config().reliable_transport {
        // Our acknowledgement of the goodbye may be lost, and the client resends it
        // until one arrives: stay a while to answer (as TCP's TIME-WAIT does), or the
        // client would find us gone and report the peer unreachable.
        let end = Instant::now() + LINGER;
        while Instant::now() < end {
            ep.progress().map_err(mx)?;
        }
    }
    Ok(())
}

/// One length's measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MxRow {
    pub length: usize,
    /// One-way latency (pingpong) or time per message (stream), microseconds.
    pub latency_us: f64,
    pub bandwidth_mb_s: f64,
}

/// Runs `plan` against the server `peer`: sends the plan, measures, says goodbye.
///
/// `on_row` sees each length's row as soon as it is measured, so a failure later in the
/// plan loses nothing already measured.
pub fn client<C: Codec>(
    ep: &mut Endpoint<C>,
    peer: PeerId,
    plan: &Plan,
    on_row: &mut dyn FnMut(&MxRow),
) -> Result<Vec<MxRow>, LabError> {
    let hello = plan.encode();
    let ready = ep
        .irecv(RecvBuf::One(vec![0; 16]), READY, u64::MAX, 0)
        .map_err(mx)?;
    let s = ep.isend(peer, &[hello.as_bytes()], HELLO, 0).map_err(mx)?;
    wait(ep, peer, s)?;
    if wait_within(ep, peer, ready, WELCOME)?.is_none() {
        let _ = ep.cancel(ready);
        return Err(LabError::Failed(format!(
            "the server is serving another client: it did not take our plan within {} s (a server serves one client at a time)",
            WELCOME.as_secs()
        )));
    }
    let rows = run_plan(ep, peer, plan, true, on_row)?;
    let s = ep.isend(peer, &[], BYE, 0).map_err(mx)?;
    wait(ep, peer, s)?;
    ep.flush_all(Duration::from_secs(2)).map_err(mx)?;
    Ok(rows)
}

/// Runs the plan on either side; the client's side returns the measurements.
fn run_plan<C: Codec>(
    ep: &mut Endpoint<C>,
    peer: PeerId,
    plan: &Plan,
    is_client: bool,
    on_row: &mut dyn FnMut(&MxRow),
) -> Result<Vec<MxRow>, LabError> {
    let mut rows = Vec::new();
    let max = plan.lengths.iter().copied().max().unwrap_or(0);
    let mut sbuf = vec![0u8; max];
    let mut rbuf = Some(RecvBuf::One(vec![0u8; max]));
    let mut reqs: Vec<Request> = Vec::with_capacity(plan.window);
    let mut ack_buf = Some(RecvBuf::One(vec![0; 4]));
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
                        rbuf = Some(recv(ep, peer, buf)?);
                    } else {
                        rbuf = Some(recv(ep, peer, buf)?);
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
                rows.push(MxRow {
                    length: len,
                    latency_us: one_way * 1e6,
                    bandwidth_mb_s: len as f64 / one_way / 1e6,
                });
                on_row(rows.last().expect("just pushed"));
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
                    reqs.clear();
                    if is_client {
                        let ab = match ack_buf.take() {
                            Some(RecvBuf::One(mut v)) => {
                                v.resize(4, 0);
                                RecvBuf::One(v)
                            }
                            _ => RecvBuf::One(vec![0; 4]),
                        };
                        let ack = ep.irecv(ab, ACK, u64::MAX, 0).map_err(mx)?;
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
                        for &s in &reqs {
                            if let (_, Some(RecvBuf::One(v))) = wait(ep, peer, s)? {
                                svecs.push(v);
                            }
                        }
                        ack_buf = wait(ep, peer, ack)?.1;
                    } else {
                        for b in bufs.drain(..) {
                            reqs.push(ep.irecv(b, DATA, u64::MAX, 0).map_err(mx)?);
                        }
                        for (k, &r) in reqs.iter().enumerate() {
                            let (_, b) = wait(ep, peer, r)?;
                            let b = b.expect("receive buffer");
                            if plan.verify {
                                if let RecvBuf::One(v) = &b {
                                    check(&v[..len], len, i * w + k)?;
                                }
                            }
                            bufs.push(b);
                        }
                        let s = ep.isend(peer, &[b"ack!"], ACK, 0).map_err(mx)?;
                        wait(ep, peer, s)?;
                    }
                }
                let secs = start.elapsed().as_secs_f64();
                let per_msg = secs / (iters * w) as f64;
                rows.push(MxRow {
                    length: len,
                    latency_us: per_msg * 1e6,
                    bandwidth_mb_s: len as f64 / per_msg / 1e6,
                });
                on_row(rows.last().expect("just pushed"));
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

    #[test]
    fn the_length_ladder() {
        assert_eq!(lengths(0, 8, None, None).unwrap(), [0, 1, 2, 4, 8]);
        assert_eq!(lengths(3, 100, None, Some(10)).unwrap(), [3, 30]);
        assert_eq!(lengths(0, 10, Some(5), None).unwrap(), [0, 5, 10]);
        assert_eq!(lengths(7, 7, None, None).unwrap(), [7]);
        for (args, msg) in [
            ((10, 5, None, None), "--start 10 is above --end 5"),
            ((1, 8, None, Some(1)), "--multiplier must be at least 2"),
            ((1, 8, Some(0), None), "--increment must be positive"),
            ((1, MAX_LEN + 1, None, None), "at most"),
        ] {
            let e = lengths(args.0, args.1, args.2, args.3).unwrap_err();
            assert!(e.to_string().contains(msg), "{e}");
            assert!(matches!(e, LabError::Invalid(_)));
        }
    }

    #[test]
    fn large_lengths_run_a_tenth_of_the_iterations() {
        let p = Plan {
            mode: Mode::Pingpong,
            lengths: vec![],
            iterations: 1000,
            warmup: 5,
            window: 1,
            verify: false,
        };
        assert_eq!(p.iters(65536), (1000, 5));
        assert_eq!(p.iters(65537), (100, 1));
    }

    #[test]
    fn a_corrupted_byte_is_found() {
        let mut b = vec![0u8; 100];
        pattern(&mut b, 100, 3);
        check(&b, 100, 3).unwrap();
        b[42] ^= 1;
        let e = check(&b, 100, 3).unwrap_err().to_string();
        assert!(
            e.starts_with("verify: length 100, message 3: byte 42 is"),
            "{e}"
        );
    }

    #[test]
    fn server_boards() {
        assert_eq!(server_board("shm", None, "lo").unwrap(), "shm");
        assert_eq!(server_board("eth", None, "eth1").unwrap(), "eth:eth1");
        assert_eq!(server_board("udp", None, "lo").unwrap(), "udp:127.0.0.1:0");
        assert_eq!(
            server_board("udp", Some("0.0.0.0:5"), "lo").unwrap(),
            "udp:0.0.0.0:5"
        );
        assert!(server_board("shm", Some("x"), "lo").is_err());
    }

    /// Both sides of the protocol in one process, over UDP on the loopback: the rows
    /// come back for every length, every byte verified. Nothing is timed.
    #[test]
    fn server_and_client_run_a_plan_over_udp() {
        for mode in [Mode::Pingpong, Mode::Stream] {
            let board = server_board("udp", None, "lo").unwrap();
            let mut server = open(&board).unwrap();
            let addr = server.addr().to_string();
            let t = std::thread::spawn(move || serve(&mut server));
            let (mut ep, peer) = connect(&addr, "lo").unwrap();
            let plan = Plan {
                mode,
                lengths: lengths(0, 70_000, Some(35_000), None).unwrap(),
                iterations: 3,
                warmup: 1,
                window: 4,
                verify: true,
            };
            let mut seen = Vec::new();
            let rows = client(&mut ep, peer, &plan, &mut |r| seen.push(r.length)).unwrap();
            t.join().unwrap().unwrap();
            // Each row reached the caller as it was measured, in order.
            assert_eq!(seen, [0, 35_000, 70_000], "{mode:?}");
            assert_eq!(
                rows.iter().map(|r| r.length).collect::<Vec<_>>(),
                [0, 35_000, 70_000],
                "{mode:?}"
            );
            assert!(rows.iter().all(|r| r.latency_us > 0.0), "{rows:?}");
        }
    }
}
