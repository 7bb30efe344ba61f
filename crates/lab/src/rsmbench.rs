//! The RSM benchmark between two processes (`myrix bench rsm`): put latency, get
//! latency, the put-based ping-pong (seed 004's "raw RSM" figure) and put bandwidth.
//!
//! The server exports a segment and publishes it; its address is
//! `CONTROLLER:NODE:SEGID` (hex id). The client connects to it, exports a segment of its
//! own and writes that segment's id and node into the server's control words, with
//! 8-byte puts. From then on the server only polls its own memory and answers pings
//! with puts into the client's segment: it never receives a message, and the put and
//! get measurements do not involve it at all (one-sided).
//!
//! Segment layout (both sides): control words at 0 (server only: the client's segment
//! id at [`W_SEGID`], its node at [`W_NODE`], goodbye at [`W_BYE`], whether the client
//! verifies at [`W_VERIFY`]), the ping flag at
//! [`W_FLAG`] (`length << 32 | sequence`), message data from [`DATA`], just after it.
//!
//! Nothing here prints or parses arguments.

use std::time::{Duration, Instant};

use myrix_rsm::spin::SpinWait;
use myrix_rsm::{
    BarrierMode, BarrierType, Controller, Export, ExportFlags, Import, NodeId, Perm, RsmError,
    SegmentId,
};

use crate::error::LabError;

/// The client's segment id, in the server's segment (0: not yet written).
pub const W_SEGID: usize = 0;
/// The client's node, written before its segment id.
pub const W_NODE: usize = 8;
/// Non-zero once the client is done.
pub const W_BYE: usize = 16;
/// Non-zero: the client verifies, so the server echoes the bytes of each ping whether
/// or not it was started with `--verify` (started by hand in another namespace or
/// host without it, it answered with its own buffer and the client reported "the pong
/// differs from the ping").
pub const W_VERIFY: usize = 24;
/// The ping (in the server's segment) or pong (in the client's) flag.
pub const W_FLAG: usize = 64;
/// Where message data starts: right after the flag, so a short message and its flag
/// share one cache line and a ping moves one line, as a postbox does.
pub const DATA: usize = W_FLAG + 8;
/// The longest message: the segment is [`DATA`] plus this, so 16 MiB bounds what a
/// command line can make either side allocate.
pub const MAX_LEN: usize = 16 << 20;
/// Bounds the run's length whatever the command line says.
pub const MAX_ITERATIONS: usize = 100_000_000;
/// Polls between two looks at the peer's liveness (a system call) and the clock.
const RARE: u32 = 1 << 14;
/// How long the server waits for a client, and either side for an answer.
const PATIENCE: Duration = Duration::from_secs(30);

fn rsm(what: &str, e: RsmError) -> LabError {
    LabError::Failed(format!("{what}: {e} ({})", e.name()))
}

/// The segment length for messages up to `max_len`, rounded up to pages.
fn segment_len(max_len: usize, page: usize) -> usize {
    (DATA + max_len.max(8)).div_ceil(page) * page
}

/// A server's address as the client takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Address {
    pub controller: String,
    pub node: NodeId,
    pub segment: SegmentId,
}

impl Address {
    pub fn parse(s: &str) -> Result<Address, LabError> {
        let bad = || {
            LabError::Invalid(format!(
                "'{s}' is not an RSM benchmark address (CONTROLLER:NODE:SEGID, as the server prints)"
            ))
        };
        let mut it = s.trim().rsplitn(3, ':');
        let seg = it.next().ok_or_else(bad)?;
        let node = it.next().ok_or_else(bad)?;
        let controller = it.next().ok_or_else(bad)?;
        let segment = u32::from_str_radix(seg.trim_start_matches("0x"), 16).map_err(|_| bad())?;
        let node: u32 = node.parse().map_err(|_| bad())?;
        Ok(Address {
            controller: controller.to_string(),
            node: NodeId(node),
            segment: SegmentId(segment),
        })
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{:08x}",
            self.controller, self.node.0, self.segment.0
        )
    }
}

/// A server: its segment, published, waiting for a client.
pub struct Server {
    ctlr: Controller,
    seg: Export,
    pub address: Address,
}

impl Server {
    /// Exports and publishes a segment for messages up to [`MAX_LEN`] on `controller`.
    pub fn open(controller: &str) -> Result<Server, LabError> {
        let ctlr = Controller::get(controller).map_err(|e| rsm(controller, e))?;
        let len = segment_len(MAX_LEN, ctlr.attr().page_size);
        let seg = ctlr
            .export_create(len, ExportFlags::default())
            .map_err(|e| rsm("export", e))?;
        let id = seg.publish(None, &[]).map_err(|e| rsm("publish", e))?;
        let address = Address {
            controller: controller.to_string(),
            node: ctlr.local_node(),
            segment: id,
        };
        Ok(Server { ctlr, seg, address })
    }

    /// Serves one client: waits for its segment, then answers pings until it says
    /// goodbye. `verify`, or a client that says it verifies ([`W_VERIFY`]), echoes
    /// the bytes received (else the reply is the server's own buffer of the same
    /// length).
    pub fn serve(&self, verify: bool) -> Result<(), LabError> {
        let load = |w| self.seg.load_u64(w).map_err(|e| rsm("poll", e));
        let mut spin = SpinWait::new();
        let start = Instant::now();
        let client_seg = loop {
            let id = load(W_SEGID)?;
            if id != 0 {
                break id;
            }
            if start.elapsed() > PATIENCE {
                return Err(LabError::Failed("no client came within 30 s".into()));
            }
            spin.spin();
        };
        let node = NodeId(load(W_NODE)? as u32);
        // Written before the segment id, so it is in memory by now.
        let verify = verify || load(W_VERIFY)? != 0;
        let peer = self
            .ctlr
            .import_connect(node, SegmentId(client_seg as u32), Perm::RDWR)
            .map_err(|e| rsm("connect to the client's segment", e))?;
        // Pongs as RSM's raw writes: explicit mode (a put does not wait for its
        // acknowledgement), one barrier scope for the whole run, data and flag in one
        // `put_with_flag` (the flag ordered after the data; one datagram over the
        // network).
        peer.set_mode(BarrierMode::Explicit)
            .map_err(|e| rsm("mode", e))?;
        let mut bar = peer
            .init_barrier(BarrierType::Segment)
            .map_err(|e| rsm("barrier", e))?;
        bar.open().map_err(|e| rsm("barrier open", e))?;
        let served = self.pong(&peer, verify);
        // The client may be gone already (its goodbye ends the run).
        let _ = bar.close();
        served
    }

    fn pong(&self, peer: &Import, verify: bool) -> Result<(), LabError> {
        let load = |w| self.seg.load_u64(w).map_err(|e| rsm("poll", e));
        let mut buf = vec![0u8; MAX_LEN];
        let mut last = 0u64;
        // The benchmark is a job of two busy processes (this one and the client).
        // Through the put and get phases no ping comes for a long time, and a wait
        // that consults the machine's load (`SpinWait::new`) soon yields the core at
        // every empty poll (its own agent waking from a nap counts as a third running
        // task): each poll then costs a `sched_yield` besides its `recvfrom`, and the
        // exporter takes the client's puts in later. Measured in session 28 (one
        // yield per empty poll through both phases, the poll period about doubled):
        // see docs/rsm-net.md. Yield only when the job oversubscribes the machine.
        myrix_rsm::spin::set_local_procs(2);
        let mut spin = SpinWait::for_job();
        let mut idle = Instant::now();
        let mut polls = 0u32;
        loop {
            let flag = load(W_FLAG)?;
            if flag != last {
                last = flag;
                let len = ((flag >> 32) as usize).min(MAX_LEN);
                if verify {
                    self.seg
                        .read(DATA, &mut buf[..len])
                        .map_err(|e| rsm("read", e))?;
                }
                peer.put_with_flag(W_FLAG, flag, &buf[..len])
                    .map_err(|e| rsm("pong", e))?;
                spin.reset();
                polls = 0;
                idle = Instant::now();
                continue;
            }
            polls = polls.wrapping_add(1);
            if polls % RARE == 0 {
                if load(W_BYE)? != 0 {
                    return Ok(());
                }
                if idle.elapsed() > PATIENCE {
                    return Err(LabError::Failed("the client went quiet for 30 s".into()));
                }
                peer.check().map_err(|e| rsm("the client", e))?;
            }
            spin.spin();
        }
    }
}

/// What the client measures.
#[derive(Clone, Debug)]
pub struct Plan {
    pub lengths: Vec<usize>,
    pub iterations: usize,
    pub warmup: usize,
    pub verify: bool,
}

/// One length's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RsmRow {
    pub length: usize,
    /// A put that has reached remote memory (implicit barrier mode), microseconds.
    pub put_us: f64,
    /// A get, microseconds.
    pub get_us: f64,
    /// Half the round trip of the put-based ping-pong, microseconds.
    pub pingpong_us: f64,
    /// Back-to-back puts in one explicit barrier scope, closed at the end, MB/s.
    pub put_mb_s: f64,
}

fn pattern(buf: &mut [u8], len: usize, i: u64) {
    for (k, b) in buf.iter_mut().enumerate() {
        *b = (k.wrapping_mul(7) ^ (i as usize).wrapping_mul(13) ^ len) as u8;
    }
}

/// Connects to the server at `addr`, runs `plan`, says goodbye. `on_row` sees each
/// row as soon as it is measured.
pub fn client(
    addr: &Address,
    plan: &Plan,
    on_row: &mut dyn FnMut(&RsmRow),
) -> Result<Vec<RsmRow>, LabError> {
    if plan.lengths.iter().any(|&l| l > MAX_LEN) {
        return Err(LabError::Invalid(format!(
            "lengths are at most {MAX_LEN} bytes"
        )));
    }
    if plan.iterations == 0 || plan.iterations > MAX_ITERATIONS || plan.warmup > MAX_ITERATIONS {
        return Err(LabError::Invalid(format!(
            "iterations must be 1 to {MAX_ITERATIONS}, warm-up at most that"
        )));
    }
    let ctlr = Controller::get(&addr.controller).map_err(|e| rsm(&addr.controller, e))?;
    let server = ctlr
        .import_connect(addr.node, addr.segment, Perm::RDWR)
        .map_err(|e| rsm(&format!("connect to {addr}"), e))?;
    let max = plan.lengths.iter().copied().max().unwrap_or(0);
    let mine = ctlr
        .export_create(
            segment_len(max, ctlr.attr().page_size),
            ExportFlags::default(),
        )
        .map_err(|e| rsm("export", e))?;
    let id = mine.publish(None, &[]).map_err(|e| rsm("publish", e))?;
    server
        .put_scalars(W_VERIFY, &[u64::from(plan.verify)])
        .map_err(|e| rsm("hello", e))?;
    server
        .put_scalars(W_NODE, &[u64::from(ctlr.local_node().0)])
        .map_err(|e| rsm("hello", e))?;
    server
        .put_scalars(W_SEGID, &[u64::from(id.0)])
        .map_err(|e| rsm("hello", e))?;
    let mut rows = Vec::new();
    let mut seq = 0u64;
    let result = (|| {
        for &len in &plan.lengths {
            let row = measure(&server, &mine, plan, len, &mut seq)?;
            on_row(&row);
            rows.push(row);
        }
        Ok(())
    })();
    let bye = server.put_scalars(W_BYE, &[1u64]);
    result?;
    bye.map_err(|e| rsm("goodbye", e))?;
    Ok(rows)
}

fn measure(
    server: &Import,
    mine: &Export,
    plan: &Plan,
    len: usize,
    seq: &mut u64,
) -> Result<RsmRow, LabError> {
    let (iters, warm) = if len > 65536 {
        ((plan.iterations / 10).max(1), plan.warmup / 10)
    } else {
        (plan.iterations, plan.warmup)
    };
    let mut sbuf = vec![0u8; len];
    let mut rbuf = vec![0u8; len];
    pattern(&mut sbuf, len, 0);
    let per = |t: Instant| t.elapsed().as_secs_f64() * 1e6 / iters as f64;

    // Put latency: implicit mode, so each put returns once it is in remote memory.
    server
        .set_mode(BarrierMode::Implicit)
        .map_err(|e| rsm("mode", e))?;
    let mut t = Instant::now();
    for i in 0..warm + iters {
        if i == warm {
            t = Instant::now();
        }
        server.put(DATA, &sbuf).map_err(|e| rsm("put", e))?;
    }
    let put_us = per(t);

    // Get latency.
    let mut t = Instant::now();
    for i in 0..warm + iters {
        if i == warm {
            t = Instant::now();
        }
        server.get(DATA, &mut rbuf).map_err(|e| rsm("get", e))?;
    }
    let get_us = per(t);
    if plan.verify && rbuf != sbuf {
        return Err(LabError::Failed(format!(
            "verify: length {len}: a get returned other bytes than were put"
        )));
    }

    // The put-based ping-pong, as RSM's raw writes (the seed's figure): explicit mode,
    // so no put waits for its acknowledgement; data and flag in one `put_with_flag`
    // (the flag ordered after the data: one datagram over the network); the scope closed (every write in remote memory) after the last round.
    server
        .set_mode(BarrierMode::Explicit)
        .map_err(|e| rsm("mode", e))?;
    let mut pp = server
        .init_barrier(BarrierType::Segment)
        .map_err(|e| rsm("barrier", e))?;
    pp.open().map_err(|e| rsm("barrier open", e))?;
    let mut spin = SpinWait::new();
    let mut t = Instant::now();
    for i in 0..warm + iters {
        if i == warm {
            t = Instant::now();
        }
        *seq += 1;
        let flag = (len as u64) << 32 | (*seq & 0xffff_ffff);
        if plan.verify {
            pattern(&mut sbuf, len, *seq);
        }
        server
            .put_with_flag(W_FLAG, flag, &sbuf)
            .map_err(|e| rsm("ping", e))?;
        wait_flag(mine, server, flag, &mut spin)?;
        if plan.verify {
            mine.read(DATA, &mut rbuf).map_err(|e| rsm("read", e))?;
            if rbuf != sbuf {
                return Err(LabError::Failed(format!(
                    "verify: length {len}, ping {seq}: the pong differs from the ping"
                )));
            }
        }
    }
    let pingpong_us = per(t) / 2.0;
    pp.close().map_err(|e| rsm("barrier close", e))?;

    // Put bandwidth: one explicit barrier scope around all the puts.
    server
        .set_mode(BarrierMode::Explicit)
        .map_err(|e| rsm("mode", e))?;
    let mut bar = server
        .init_barrier(BarrierType::Segment)
        .map_err(|e| rsm("barrier", e))?;
    let t = Instant::now();
    bar.open().map_err(|e| rsm("barrier open", e))?;
    for _ in 0..iters {
        server.put(DATA, &sbuf).map_err(|e| rsm("put", e))?;
    }
    bar.close().map_err(|e| rsm("barrier close", e))?;
    let secs = t.elapsed().as_secs_f64();
    server
        .set_mode(BarrierMode::Implicit)
        .map_err(|e| rsm("mode", e))?;
    let put_mb_s = (len * iters) as f64 / secs / 1e6;
    Ok(RsmRow {
        length: len,
        put_us,
        get_us,
        pingpong_us,
        put_mb_s,
    })
}

/// Polls this side's flag until it reads `flag`. `spin` lives across waits: making
/// one reads `/proc/loadavg`, a system call that would cost more than the ping-pong.
fn wait_flag(
    mine: &Export,
    server: &Import,
    flag: u64,
    spin: &mut SpinWait,
) -> Result<(), LabError> {
    let mut polls = 0u32;
    let start = Instant::now();
    while mine.load_u64(W_FLAG).map_err(|e| rsm("poll", e))? != flag {
        polls = polls.wrapping_add(1);
        if polls % RARE == 0 {
            server.check().map_err(|e| rsm("the server", e))?;
            if start.elapsed() > PATIENCE {
                return Err(LabError::Failed(
                    "the server did not answer within 30 s".into(),
                ));
            }
        }
        spin.spin();
    }
    spin.reset();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_and_bad_ones_are_refused() {
        let a = Address {
            controller: "shm".into(),
            node: NodeId(3),
            segment: SegmentId(0x8000_0001),
        };
        assert_eq!(a.to_string(), "shm:3:80000001");
        assert_eq!(Address::parse(&a.to_string()).unwrap(), a);
        assert_eq!(
            Address::parse("udp:7:0x80000002").unwrap().segment,
            SegmentId(0x8000_0002)
        );
        for bad in [
            "",
            "shm",
            "shm:1",
            "shm:x:80000001",
            "shm:1:zz",
            "shm:99999999999:1",
        ] {
            assert!(Address::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn segments_hold_the_control_words_and_the_longest_message() {
        assert_eq!(segment_len(0, 4096), 4096);
        assert_eq!(segment_len(4096 - DATA, 4096), 4096);
        assert_eq!(segment_len(4097 - DATA, 4096), 8192);
        assert_eq!(segment_len(MAX_LEN, 4096), MAX_LEN + 4096);
    }
}
