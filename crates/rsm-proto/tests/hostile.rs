//! An exporter driven with hand-made frames from a peer that does not follow the
//! protocol: nothing it sends makes the exporter touch memory outside a segment, write
//! through a read-only or aborted connection, or panic; a newer session of the peer
//! ends its old connections.

use std::collections::HashMap;

use myrix_rsm_proto::engine::{Config, Engine, Event, SignalTarget};
use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, RsmError, SegmentId};
use myrix_wire::rsm::{Body, Header, Repr};
use proptest::prelude::*;

const SEG: SegmentId = SegmentId(0x8000_0001);
const LEN: usize = 4096;
const PEER: usize = 9;

/// A fake importer that numbers its frames itself.
struct Raw {
    session: u32,
    seq: u16,
}

impl Raw {
    fn frame(&mut self, body: Body<'_>) -> Vec<u8> {
        let r = Repr {
            header: Header {
                session: self.session,
                seq: self.seq,
                ack: 0,
                ..Header::default()
            },
            body,
        };
        self.seq = self.seq.wrapping_add(1);
        let mut b = vec![0; r.buffer_len()];
        r.emit(&mut b).unwrap();
        b
    }
}

type Mem = HashMap<SegmentId, Vec<u8>>;

fn exporter() -> (Engine<usize>, Mem) {
    let mut e = Engine::new(Config::fast_timers(), NodeId(0), 1);
    let mut mem = Mem::new();
    mem.insert(SEG, vec![0xee; LEN]);
    e.publish(SEG, Acl::Open(Perm(0o666)), Credentials { uid: 1, gid: 1 })
        .unwrap();
    (e, mem)
}

/// Everything the exporter sends, parsed into owned bodies we care about.
#[derive(Debug, PartialEq)]
enum Out {
    ConnectReply { status: u32, exp: u32 },
    ReadReply { status: u32, len: usize },
    FlushReply { status: u32 },
    Abort,
    Other,
}

fn drain(e: &mut Engine<usize>) -> Vec<Out> {
    let mut buf = vec![0; 1500];
    let mut out = Vec::new();
    while let Some((dst, n)) = e.poll_transmit(1, &mut buf) {
        assert_eq!(dst, PEER);
        let r = Repr::parse_bytes(&buf[..n]).unwrap();
        out.push(match r.body {
            Body::ConnectReply {
                status,
                exporter_conn,
                ..
            } => Out::ConnectReply {
                status,
                exp: exporter_conn,
            },
            Body::ReadReply { status, data, .. } => Out::ReadReply {
                status,
                len: data.len(),
            },
            Body::FlushReply { status, .. } => Out::FlushReply { status },
            Body::Abort { .. } => Out::Abort,
            Body::Ack => continue, // explicit acks come when they are due
            _ => Out::Other,
        });
    }
    out
}

fn connect(e: &mut Engine<usize>, mem: &mut Mem, raw: &mut Raw, perm: u32) -> u32 {
    let f = raw.frame(Body::Connect {
        segment: SEG.0,
        perm,
        node: 5,
        uid: 2,
        gid: 2,
        conn: 77,
    });
    assert!(e.handle_frame(1, &PEER, &f, mem));
    match drain(e).as_slice() {
        [Out::ConnectReply { status: 0, exp }] => *exp,
        other => panic!("{other:?}"),
    }
}

const BARRIER_FAILURE: u32 = RsmError::BarrierFailure as u32;
const CONN_ABORTED: u32 = RsmError::ConnAborted as u32;

#[test]
fn out_of_bounds_and_forbidden_writes_are_not_applied() {
    let (mut e, mut mem) = exporter();
    let mut raw = Raw { session: 1, seq: 0 };
    let rw = connect(&mut e, &mut mem, &mut raw, 0o600);
    let ro = connect(&mut e, &mut mem, &mut raw, 0o400);
    let bad = [
        (rw, LEN as u64 - 1, 2usize),
        (rw, LEN as u64, 1),
        (rw, u64::MAX - 4, 4),
        (ro, 0, 8),
        (12345, 0, 8),
    ];
    for (conn, offset, n) in bad {
        let f = raw.frame(Body::Write {
            conn,
            offset,
            data: &vec![1; n],
        });
        e.handle_frame(1, &PEER, &f, &mut mem);
    }
    assert!(mem[&SEG].iter().all(|&b| b == 0xee), "nothing applied");
    assert_eq!(e.stats().writes_refused, 5);
    let f = raw.frame(Body::Flush { conn: rw, token: 1 });
    e.handle_frame(1, &PEER, &f, &mut mem);
    let f = raw.frame(Body::Flush { conn: rw, token: 2 });
    e.handle_frame(1, &PEER, &f, &mut mem);
    let f = raw.frame(Body::Flush {
        conn: 12345,
        token: 3,
    });
    e.handle_frame(1, &PEER, &f, &mut mem);
    assert_eq!(
        drain(&mut e),
        [
            Out::FlushReply {
                status: BARRIER_FAILURE
            },
            Out::FlushReply { status: 0 },
            Out::FlushReply {
                status: CONN_ABORTED
            }
        ]
    );
    // Reads: out of bounds, too long, zero, on a write-only connection.
    let wo = connect(&mut e, &mut mem, &mut raw, 0o200);
    for (conn, offset, length) in [
        (rw, LEN as u64 - 1, 2),
        (rw, u64::MAX, 1),
        (rw, 0, 1 << 20),
        (rw, 0, 0),
        (wo, 0, 1),
        (rw, 0, LEN as u32),
    ] {
        let f = raw.frame(Body::ReadReq {
            conn,
            request: 1,
            offset,
            length,
        });
        e.handle_frame(1, &PEER, &f, &mut mem);
    }
    let out = drain(&mut e);
    let statuses: Vec<u32> = out
        .iter()
        .filter_map(|o| match o {
            Out::ReadReply { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    let code = |e: RsmError| e.code() as u32;
    assert_eq!(
        statuses[..5],
        [
            code(RsmError::BadLength),
            code(RsmError::BadOffset),
            code(RsmError::BadLength),
            code(RsmError::BadLength),
            code(RsmError::PermDenied)
        ]
    );
    let data: usize = out
        .iter()
        .map(|o| match o {
            Out::ReadReply { status: 0, len } => *len,
            _ => 0,
        })
        .sum();
    assert_eq!(data, LEN, "the good read is answered in MTU-sized replies");
}

#[test]
fn after_unpublish_nothing_is_applied_and_everything_is_aborted() {
    let (mut e, mut mem) = exporter();
    let mut raw = Raw { session: 1, seq: 0 };
    let rw = connect(&mut e, &mut mem, &mut raw, 0o600);
    e.unpublish(SEG).unwrap();
    assert_eq!(drain(&mut e), [Out::Abort]);
    let f = raw.frame(Body::Write {
        conn: rw,
        offset: 0,
        data: b"late",
    });
    e.handle_frame(1, &PEER, &f, &mut mem);
    let f = raw.frame(Body::ReadReq {
        conn: rw,
        request: 1,
        offset: 0,
        length: 4,
    });
    e.handle_frame(1, &PEER, &f, &mut mem);
    let f = raw.frame(Body::Flush { conn: rw, token: 1 });
    e.handle_frame(1, &PEER, &f, &mut mem);
    let f = raw.frame(Body::Signal {
        to_importer: false,
        conn: rw,
        flags: 0,
    });
    e.handle_frame(1, &PEER, &f, &mut mem);
    assert!(mem[&SEG].iter().all(|&b| b == 0xee));
    assert_eq!(
        drain(&mut e),
        [
            Out::ReadReply {
                status: CONN_ABORTED,
                len: 0
            },
            Out::FlushReply {
                status: CONN_ABORTED
            }
        ]
    );
    assert_eq!(
        e.poll_event(),
        None,
        "no signal through an aborted connection"
    );
}

#[test]
fn a_signals_sender_is_the_connections_node_and_a_newer_session_ends_connections() {
    let (mut e, mut mem) = exporter();
    let mut raw = Raw { session: 1, seq: 0 };
    let rw = connect(&mut e, &mut mem, &mut raw, 0o600);
    let f = raw.frame(Body::Signal {
        to_importer: false,
        conn: rw,
        flags: 0,
    });
    e.handle_frame(1, &PEER, &f, &mut mem);
    assert_eq!(
        e.poll_event(),
        Some(Event::Signal {
            target: SignalTarget::Export(SEG),
            from: NodeId(5)
        })
    );
    // The peer restarts: its old connection is gone, an old-session frame is dropped.
    let mut new = Raw { session: 2, seq: 0 };
    let rw2 = connect(&mut e, &mut mem, &mut new, 0o600);
    assert_eq!(e.connections(SEG), 1);
    let f = raw.frame(Body::Write {
        conn: rw,
        offset: 0,
        data: b"old",
    });
    assert!(!e.handle_frame(1, &PEER, &f, &mut mem));
    let f = new.frame(Body::Write {
        conn: rw,
        offset: 0,
        data: b"old",
    });
    e.handle_frame(1, &PEER, &f, &mut mem);
    assert!(mem[&SEG].iter().all(|&b| b == 0xee));
    let f = new.frame(Body::Write {
        conn: rw2,
        offset: 0,
        data: b"new",
    });
    e.handle_frame(1, &PEER, &f, &mut mem);
    assert_eq!(&mem[&SEG][..3], b"new");
}

#[test]
fn frames_from_unknown_peers_make_no_state_unless_they_connect() {
    let (mut e, mut mem) = exporter();
    let mut raw = Raw { session: 1, seq: 5 };
    let f = raw.frame(Body::Write {
        conn: 1,
        offset: 0,
        data: b"x",
    });
    assert!(!e.handle_frame(1, &PEER, &f, &mut mem));
    assert!(!e.handle_frame(1, &PEER, b"R\x01garbage", &mut mem));
    assert_eq!(e.stats().frames_dropped, 2);
    assert!(e.idle());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Any sequence of well-formed frames with any numbers, and any bytes, from two
    /// peers: the exporter never panics (the vector-backed memory panics on any access
    /// outside the segment), and the segment keeps its length.
    #[test]
    fn any_frames_never_panic_nor_reach_outside(
        frames in proptest::collection::vec(
            (0u8..=12, any::<u32>(), 0u32..4, any::<u64>(), 0u32..70_000,
             proptest::collection::vec(any::<u8>(), 0..64), 0u16..6, any::<bool>()),
            0..40),
    ) {
        let (mut e, mut mem) = exporter();
        let mut buf = vec![0; 1500];
        for (kind, a, small, c, len, data, seq, peer) in frames {
            let conn = small; // connection ids are small: hit real ones
            let off = c % (LEN as u64 + 64);
            let body = match kind {
                1 => Body::Connect { segment: if a % 2 == 0 { SEG.0 } else { a }, perm: 0o600 & a, node: a, uid: a, gid: 0, conn },
                2 => Body::ConnectReply { conn, status: a, exporter_conn: a, length: c },
                3 => Body::Disconnect { conn },
                4 => Body::Write { conn, offset: off, data: &data },
                5 => Body::ReadReq { conn, request: a, offset: off, length: len },
                6 => Body::ReadReply { request: a, status: a % 50, offset: off, data: &data },
                7 => Body::Flush { conn, token: a },
                8 => Body::FlushReply { token: a, status: a },
                9 | 10 => Body::Signal { to_importer: kind == 10, conn, flags: a },
                11 => Body::Abort { conn, status: a },
                0 => {
                    let _ = e.handle_frame(1, &(peer as usize), &data, &mut mem);
                    continue;
                }
                _ => Body::Ack,
            };
            let r = Repr { header: Header { session: 1, seq, ack: a as u16, ..Header::default() }, body };
            let mut f = vec![0; r.buffer_len()];
            r.emit(&mut f).unwrap();
            e.handle_frame(1, &(peer as usize), &f, &mut mem);
            while e.poll_transmit(1, &mut buf).is_some() {}
            e.handle_timeout(u64::MAX / 2);
        }
        prop_assert_eq!(mem[&SEG].len(), LEN);
    }
}

/// An exporter answering a get with replies that do not fit it (wrong offset, too
/// long, an unknown request) fails the get; nothing is written outside its buffer.
#[test]
fn read_replies_that_do_not_fit_fail_the_get() {
    let mut e: Engine<usize> = Engine::new(Config::fast_timers(), NodeId(1), 1);
    let mut mem = Mem::new();
    let imp = e
        .connect(
            PEER,
            NodeId(0),
            SEG,
            Perm::READ,
            Credentials { uid: 1, gid: 1 },
        )
        .unwrap();
    let mut raw = Raw { session: 1, seq: 0 };
    let f = raw.frame(Body::ConnectReply {
        conn: imp.0,
        status: 0,
        exporter_conn: 3,
        length: 100,
    });
    e.handle_frame(1, &PEER, &f, &mut mem);
    assert!(matches!(
        e.poll_event(),
        Some(Event::Connected {
            result: Ok(100),
            ..
        })
    ));
    let g = e.get(imp, 10, 20).unwrap();
    for (request, offset, n) in [(g.0 + 1, 10, 5), (g.0, 10, 5), (g.0, 16, 5), (g.0, 15, 99)] {
        let f = raw.frame(Body::ReadReply {
            request,
            status: 0,
            offset,
            data: &vec![7; n],
        });
        e.handle_frame(1, &PEER, &f, &mut mem);
    }
    assert_eq!(
        e.poll_event(),
        Some(Event::GetDone {
            get: g,
            import: imp,
            result: Err(RsmError::BarrierFailure)
        })
    );
}
