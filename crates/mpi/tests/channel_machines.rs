//! The channel's sender and receiver state machines over test memory, in one thread,
//! with random interleavings (seeded, deterministic): every byte checked across the
//! short, long and rendezvous protocols, out-of-order takes, truncation, queue and
//! pool wrap-around and exhaustion; and hostile postboxes.

use std::collections::HashMap;

use myrix_mpi::channel::layout::{self, ack, area, kind, postbox as pb, Flag};
use myrix_mpi::channel::recv::{Rx, Sink, Taken};
use myrix_mpi::channel::send::{Geometry, Link, Tx};
use myrix_mpi::channel::window::{DstBuf, Mem, SrcBuf};
use myrix_mpi::p2p::fabric::{Envelope, Event, SendId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn pair(g: Geometry, short: usize, eager: usize) -> (Tx, Rx) {
    let (area_s, area_r) = Mem::heap(area::len(g.queue, g.pool_bytes()));
    let (ack_s, ack_r) = Mem::heap(ack::len(g.queue));
    let mut tx = Tx::new(short, eager);
    tx.connect(Link::new(g, area_s, ack_s).unwrap());
    let rx = Rx::new(1, g, area_r, ack_r).unwrap();
    (tx, rx)
}

struct Msg {
    data: Vec<u8>,
    env: Envelope,
}

/// A receiver's posted receives as the tests see them: claims about half the messages
/// offered (the envelope's tag names the message: `tag + 5`), each into a buffer of
/// its own.
struct Claims {
    rng: ChaCha8Rng,
    cur: Option<(u64, Vec<u8>)>,
    done: Vec<(u64, Vec<u8>)>,
}

impl Sink for Claims {
    fn claim(&mut self, _src: u32, env: &Envelope) -> Option<DstBuf> {
        assert!(
            self.cur.is_none(),
            "a claim before the last one was finished"
        );
        if !self.rng.gen_bool(0.5) {
            return None;
        }
        let mut buf = vec![0u8; env.len];
        // SAFETY: (test) the buffer moves into `cur` (its heap memory stays put) and
        // lives until checked.
        let dst = unsafe { DstBuf::new(buf.as_mut_ptr(), buf.len()) };
        self.cur = Some(((env.tag + 5) as u64, buf));
        Some(dst)
    }

    fn claimed(&mut self, ok: bool) {
        assert!(ok);
        self.done.push(self.cur.take().expect("a claim to finish"));
    }
}

/// `fast`: short messages go through `Tx::send_short_now` when it takes them, and the
/// receiver's polls offer messages to a [`Claims`] sink (`Rx::poll_into`).
fn run(seed: u64, g: Geometry, short: usize, eager: usize, n: usize) {
    run_with(seed, g, short, eager, n, false);
}

fn run_with(seed: u64, g: Geometry, short: usize, eager: usize, n: usize, fast: bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut claims = Claims {
        rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5eed),
        cur: None,
        done: Vec::new(),
    };
    let (mut tx, mut rx) = pair(g, short, eager);
    let msgs: Vec<Msg> = (0..n)
        .map(|i| {
            let len = match rng.gen_range(0..4) {
                0 => rng.gen_range(0..=short),
                1 => rng.gen_range(short..=eager),
                2 => rng.gen_range(eager..=eager * 3 + 1),
                _ => rng.gen_range(0..=100),
            };
            let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            Msg {
                env: Envelope {
                    ctx: i as u32 % 3,
                    tag: i as i32 - 5,
                    len,
                    sync: rng.gen_bool(0.15),
                },
                data,
            }
        })
        .collect();
    let mut sent = 0;
    let (mut written_now, mut claimed) = (0, 0);
    let mut ev = Vec::new();
    let mut arrived: Vec<u64> = Vec::new(); // announced, not taken
    let mut next_arrival = 0u64;
    let mut bufs: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut done_send = vec![false; n];
    let mut matched = vec![false; n];
    let mut taken = vec![false; n];
    let mut received = vec![false; n];
    let check = |seq: u64, buf: &Vec<u8>, msgs: &Vec<Msg>| {
        let m = &msgs[seq as usize];
        let k = m.data.len().min(buf.len());
        assert_eq!(&buf[..k], &m.data[..k], "message {seq} bytes");
    };
    for round in 0.. {
        assert!(round < 2_000_000, "hang: sent {sent}, arrived {arrived:?}");
        match rng.gen_range(0..5) {
            0 if sent < n => {
                let m = &msgs[sent];
                // SAFETY: (test) `msgs` outlives the machines.
                let src = unsafe { SrcBuf::new(m.data.as_ptr(), m.data.len()) };
                if fast {
                    tx.pump(&mut ev).unwrap(); // so that the queue is often empty
                }
                if fast && tx.send_short_now(m.env, src).unwrap() {
                    done_send[sent] = true; // written whole: no SendDone follows
                    written_now += 1;
                } else {
                    tx.push(SendId(sent as u64), m.env, src);
                }
                sent += 1;
            }
            1 => {
                tx.pump(&mut ev).unwrap();
            }
            2 if fast => {
                rx.poll_into(&mut ev, Some(&mut claims)).unwrap();
            }
            2 => {
                rx.poll(&mut ev).unwrap();
            }
            3 if !arrived.is_empty() => {
                let i = rng.gen_range(0..arrived.len());
                let seq = arrived.swap_remove(i);
                let len = msgs[seq as usize].env.len;
                let cap = if rng.gen_bool(0.1) { len / 2 } else { len };
                let mut buf = vec![0u8; cap];
                // SAFETY: (test) the buffer lives in `bufs` until checked.
                let dst = unsafe { DstBuf::new(buf.as_mut_ptr(), buf.len()) };
                let r = rx.take(seq, dst).unwrap();
                taken[seq as usize] = true;
                match r {
                    Taken::Done => {
                        check(seq, &buf, &msgs);
                        received[seq as usize] = true;
                    }
                    Taken::Later => {
                        bufs.insert(seq, buf);
                    }
                    Taken::Unknown => panic!("take of {seq} unknown"),
                }
                assert_eq!(rx.take(seq, dst), Ok(Taken::Unknown));
            }
            _ => {}
        }
        for (seq, buf) in claims.done.drain(..) {
            // Claimed messages are never announced, and come in order with the others.
            assert!(seq >= next_arrival, "claimed {seq} out of order");
            next_arrival = seq + 1;
            assert!(!msgs[seq as usize].env.sync && buf.len() == msgs[seq as usize].env.len);
            check(seq, &buf, &msgs);
            taken[seq as usize] = true;
            received[seq as usize] = true;
            claimed += 1;
        }
        for e in ev.drain(..) {
            match e {
                Event::Arrived { token, env } => {
                    assert!(token.seq >= next_arrival, "in order");
                    next_arrival = token.seq + 1;
                    assert_eq!(env, msgs[token.seq as usize].env);
                    arrived.push(token.seq);
                }
                Event::Received { token } => {
                    let buf = bufs.remove(&token.seq).expect("received a taken message");
                    check(token.seq, &buf, &msgs);
                    received[token.seq as usize] = true;
                }
                Event::SendDone { send } => {
                    assert!(!done_send[send.0 as usize]);
                    done_send[send.0 as usize] = true;
                }
                Event::SyncMatched { send } => {
                    let i = send.0 as usize;
                    assert!(msgs[i].env.sync && taken[i] && !matched[i]);
                    matched[i] = true;
                }
                e => panic!("unexpected {e:?}"),
            }
        }
        if sent == n && received.iter().all(|&r| r) && done_send.iter().all(|&d| d) {
            break;
        }
    }
    for (i, m) in msgs.iter().enumerate() {
        assert_eq!(matched[i], m.env.sync, "sync {i}");
    }
    if fast {
        assert!(
            written_now > 0 && claimed > 0,
            "{written_now} written at once, {claimed} claimed"
        );
    }
    assert!(
        !tx.busy() || {
            tx.pump(&mut ev).unwrap();
            !tx.busy()
        }
    );
}

#[test]
fn random_interleavings_deliver_every_byte() {
    let g = Geometry {
        queue: 8,
        pool_units: 8,
        small: 64,
        large: 128,
    };
    for seed in 0..20 {
        run(seed, g, 100, 700, 150);
    }
}

#[test]
fn short_messages_written_at_once_and_claimed() {
    // Queue 16: the acks are taken back eight at a time and one by one.
    let g = Geometry {
        queue: 16,
        pool_units: 16,
        small: 64,
        large: 128,
    };
    for seed in 200..215 {
        run_with(seed, g, 100, 700, 300, true);
    }
    let g = Geometry {
        queue: 4,
        pool_units: 4,
        small: 64,
        large: 128,
    };
    run_with(7, g, 40, 300, 200, true);
}

#[test]
fn default_geometry_many_messages() {
    let g = Geometry {
        queue: 64,
        pool_units: 128,
        small: 2048,
        large: 4096,
    };
    run(99, g, 1024, 65536, 300);
}

#[test]
fn tiny_pool_exhausts_and_recovers() {
    // Two large blocks of pool, four postboxes: every long message waits for acks.
    let g = Geometry {
        queue: 4,
        pool_units: 4,
        small: 64,
        large: 128,
    };
    for seed in 100..110 {
        run(seed, g, 40, 2000, 60);
    }
}

/// Writes a postbox the way a buggy or hostile sender might.
fn hostile(area: &Mem, pos: u64, q: u32, f: Flag, body: &[(usize, u64)]) {
    let off = area::postbox((pos % q as u64) as u32);
    for &(o, v) in body {
        area.write(off + o, &v.to_le_bytes()).unwrap();
    }
    area.store_u64(off + pb::FLAG, f.encode()).unwrap();
}

#[test]
fn hostile_postboxes_are_errors_not_panics() {
    let g = Geometry {
        queue: 8,
        pool_units: 8,
        small: 64,
        large: 128,
    };
    let lap = |p| layout::lap(p, g.queue);
    type Case = (Flag, Vec<(usize, u64)>, bool);
    let cases: Vec<Case> = vec![
        // Inline count not matching the length.
        (
            Flag {
                lap: lap(0),
                kind: kind::SHORT,
                count: 0,
                nbytes: 40,
            },
            vec![(pb::LEN, 3)],
            true,
        ),
        // A block index past the pool.
        (
            Flag {
                lap: lap(0),
                kind: kind::LONG,
                count: 1,
                nbytes: 0,
            },
            vec![(pb::LEN, 100), (pb::FIRST_PAYLOAD, 8)],
            true,
        ),
        // A large block overhanging the pool's end.
        (
            Flag {
                lap: lap(0),
                kind: kind::LONG,
                count: 1,
                nbytes: 0,
            },
            vec![
                (pb::LEN, 100),
                (pb::FIRST_PAYLOAD, 7 | layout::REF_LARGE as u64),
            ],
            true,
        ),
        // Too many references.
        (
            Flag {
                lap: lap(0),
                kind: kind::LONG,
                count: 200,
                nbytes: 0,
            },
            vec![(pb::LEN, 100)],
            true,
        ),
        // Data for a message never taken.
        (
            Flag {
                lap: lap(0),
                kind: kind::RDATA,
                count: 1,
                nbytes: 0,
            },
            vec![(pb::SEQ, 5), (pb::LEN, 10)],
            false,
        ),
        // A continuation with no message.
        (
            Flag {
                lap: lap(0),
                kind: kind::CONT_INLINE,
                count: 0,
                nbytes: 4,
            },
            vec![],
            false,
        ),
        (
            Flag {
                lap: lap(0),
                kind: 77,
                count: 0,
                nbytes: 0,
            },
            vec![],
            false,
        ),
    ];
    for (i, (f, body, at_take)) in cases.into_iter().enumerate() {
        let (area_s, area_r) = Mem::heap(area::len(g.queue, g.pool_bytes()));
        let (_ack_s, ack_r) = Mem::heap(ack::len(g.queue));
        let mut rx = Rx::new(1, g, area_r, ack_r).unwrap();
        hostile(&area_s, 0, g.queue, f, &body);
        let mut ev = Vec::new();
        let r = rx.poll(&mut ev);
        if at_take {
            assert!(r.is_ok(), "case {i}: the envelope itself is fine");
            let mut buf = [0u8; 200];
            // SAFETY: (test) `buf` outlives the take.
            let dst = unsafe { DstBuf::new(buf.as_mut_ptr(), buf.len()) };
            assert!(rx.take(0, dst).is_err(), "case {i}");
        } else {
            assert!(r.is_err(), "case {i}");
        }
    }
    // Garbage laps are "not yet", never an error.
    let (area_s, area_r) = Mem::heap(area::len(g.queue, g.pool_bytes()));
    let (_ack_s, ack_r) = Mem::heap(ack::len(g.queue));
    let mut rx = Rx::new(1, g, area_r, ack_r).unwrap();
    hostile(
        &area_s,
        0,
        g.queue,
        Flag {
            lap: 9,
            kind: kind::SHORT,
            count: 0,
            nbytes: 0,
        },
        &[],
    );
    assert_eq!(rx.poll(&mut Vec::new()), Ok(false));
}

#[test]
fn random_garbage_never_panics() {
    let g = Geometry {
        queue: 8,
        pool_units: 8,
        small: 64,
        large: 128,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..2000 {
        let (area_s, area_r) = Mem::heap(area::len(g.queue, g.pool_bytes()));
        let (_ack_s, ack_r) = Mem::heap(ack::len(g.queue));
        let mut rx = Rx::new(1, g, area_r, ack_r).unwrap();
        let mut ev = Vec::new();
        let mut buf = vec![0u8; 300];
        for pos in 0..12u64 {
            let mut line = [0u8; 64];
            rng.fill(&mut line[..]);
            area_s
                .write(area::postbox((pos % 8) as u32), &line)
                .unwrap();
            let f = Flag {
                lap: layout::lap(pos, g.queue),
                kind: rng.gen_range(0..8),
                count: rng.gen_range(0..16),
                nbytes: rng.gen_range(0..64),
            };
            area_s
                .store_u64(area::postbox((pos % 8) as u32), f.encode())
                .unwrap();
            if rx.poll(&mut ev).is_err() {
                break;
            }
            for e in ev.drain(..) {
                if let Event::Arrived { token, .. } = e {
                    // SAFETY: (test) `buf` outlives the take and the receiver.
                    let dst = unsafe { DstBuf::new(buf.as_mut_ptr(), buf.len()) };
                    let _ = rx.take(token.seq, dst);
                }
            }
        }
    }
}
