//! Thousands of randomized messages of every class between three endpoints, with random
//! matching patterns and posting orders, over a network that loses, duplicates and
//! reorders. Checked: every message received exactly once, with the right bytes and
//! status; messages from one peer matched in the order sent; every send completes. And
//! the blocking receive's way of waiting without a request, on a lossless network.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};

use common::*;
use myrix_mx_proto::engine::{Code, Codec, Config, Mx, Request};
use myrix_mx_proto::testnet::NetConfig;
use myrix_mx_proto::RecvBuf;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Matching categories, in the top 4 bits of the match info.
const BY_SENDER: u64 = 1; // received by "any message from sender s" receives
const EXACT: u64 = 2; // received by a receive for exactly this message
const WILDCARD: u64 = 3; // received by "any wildcard message" receives
const CAT_MASK: u64 = 0xf << 60;
const SENDER_MASK: u64 = 0xff << 52;
/// Largest message the non-exact categories send: their receives cannot know the size.
const SHARED_MAX: usize = 4096;

#[derive(Clone, Debug)]
struct Msg {
    id: u64,
    from: usize,
    to: usize,
    cat: u64,
    len: usize,
    sync: bool,
}

impl Msg {
    fn match_info(&self) -> u64 {
        (self.cat << 60) | ((self.from as u64) << 52) | self.id
    }
}

#[derive(Clone, Debug)]
enum Action {
    Send(usize),
    /// Post a receive at `at`: match, mask, buffer size, order key.
    Post {
        at: usize,
        match_info: u64,
        mask: u64,
        room: usize,
        key: (usize, u64),
    },
}

fn length(rng: &mut ChaCha8Rng, exact: bool) -> usize {
    let x = rng.gen_range(0..100);
    if x < 40 {
        rng.gen_range(0..=32)
    } else if x < 65 {
        rng.gen_range(33..=128)
    } else if x < 90 || !exact {
        // Medium, mostly a few KiB, sometimes up to the 32 KiB limit.
        if rng.gen_bool(0.8) || !exact {
            rng.gen_range(129..=SHARED_MAX)
        } else {
            rng.gen_range(129..=32 * 1024)
        }
    } else {
        rng.gen_range(32 * 1024 + 1..=160_000)
    }
}

/// Per order key, the completed receives as (place in posting order, sender, place in
/// the sender's sending order): in posting order, each sender's messages must come in
/// the order it sent them.
fn assert_sender_order<K: std::fmt::Debug>(order: HashMap<K, Vec<(usize, usize, usize)>>) {
    for (key, mut v) in order {
        v.sort();
        let mut last: HashMap<usize, usize> = HashMap::new();
        for (_, from, sent) in v {
            if let Some(&prev) = last.get(&from) {
                assert!(
                    prev < sent,
                    "{key:?}: send #{sent} matched after #{prev} from {from}"
                );
            }
            last.insert(from, sent);
        }
    }
}

fn run(loss: f64, messages: usize, seed: u64) {
    run_with::<Mx>(loss, messages, seed, Config::default());
}

#[allow(clippy::type_complexity)]
fn run_with<C: Codec>(loss: f64, messages: usize, seed: u64, cfg: Config) {
    let n = 3;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let net = if loss == 0.0 {
        NetConfig::lossy(0.0, seed)
    } else {
        NetConfig::lossy(loss, seed)
    };
    let cfg = Config {
        resend_ns: 5_000_000,
        ..cfg
    };
    let (mut t, peers) = mesh_with::<C>(n, &cfg, net);

    let mut msgs = Vec::new();
    let mut actions = Vec::new();
    for id in 0..messages as u64 {
        let from = rng.gen_range(0..n);
        let to = (from + rng.gen_range(1..n)) % n;
        let cat = [BY_SENDER, EXACT, WILDCARD][rng.gen_range(0..3)];
        let len = length(&mut rng, cat == EXACT);
        let m = Msg {
            id,
            from,
            to,
            cat,
            len,
            sync: rng.gen_bool(0.1),
        };
        let mi = m.match_info();
        let (match_info, mask, room, key) = match cat {
            EXACT => {
                let room = if rng.gen_bool(0.1) {
                    rng.gen_range(0..=len)
                } else {
                    len + rng.gen_range(0..16)
                };
                (mi, u64::MAX, room, (to, mi))
            }
            BY_SENDER => {
                let mi = (BY_SENDER << 60) | ((from as u64) << 52);
                let room = if rng.gen_bool(0.1) { 100 } else { SHARED_MAX };
                (mi, CAT_MASK | SENDER_MASK, room, (to, mi))
            }
            _ => {
                let room = if rng.gen_bool(0.1) { 100 } else { SHARED_MAX };
                (WILDCARD << 60, CAT_MASK, room, (to, WILDCARD << 60))
            }
        };
        actions.push(Action::Send(msgs.len()));
        actions.push(Action::Post {
            at: to,
            match_info,
            mask,
            room,
            key,
        });
        msgs.push(m);
    }
    // Random posting order: receives before or after their messages, any interleaving.
    actions.shuffle(&mut rng);

    let mut sends: Vec<(usize, Request, u64)> = Vec::new();
    let mut recvs: Vec<(usize, Request, usize, (usize, u64), usize)> = Vec::new();
    let mut post_counter = 0usize;
    // Position of each message in its sender's sending order.
    let mut sent_order: HashMap<u64, usize> = HashMap::new();
    for a in &actions {
        let now = t.now;
        match a {
            Action::Send(i) => {
                let m = &msgs[*i];
                let data = pattern(m.id, m.len);
                let r = t.engines[m.from]
                    .isend(
                        now,
                        peers[m.from][m.to],
                        &[&data],
                        m.match_info(),
                        m.id,
                        m.sync,
                    )
                    .unwrap();
                sends.push((m.from, r, m.id));
                sent_order.insert(m.id, sends.len());
            }
            Action::Post {
                at,
                match_info,
                mask,
                room,
                key,
            } => {
                let r = t.engines[*at]
                    .irecv(now, RecvBuf::One(vec![0; *room]), *match_info, *mask, 0)
                    .unwrap();
                recvs.push((*at, r, *room, *key, post_counter));
                post_counter += 1;
            }
        }
        for _ in 0..rng.gen_range(0..4) {
            t.step();
        }
    }

    // Run until everything completes, collecting results as they come.
    let mut got: HashSet<u64> = HashSet::new();
    // Per order key: (post order, sender, id) of each completed receive.
    let mut order: HashMap<(usize, u64), Vec<(usize, usize, usize)>> = HashMap::new();
    let mut sends_done = 0usize;
    let mut pending_recvs = recvs.clone();
    let mut pending_sends = sends.clone();
    let by_id: BTreeMap<u64, &Msg> = msgs.iter().map(|m| (m.id, m)).collect();
    let limit = 600_000_000_000u64;
    let start = t.now;
    while !(pending_recvs.is_empty() && pending_sends.is_empty()) {
        assert!(
            t.now - start < limit,
            "stuck: {} receives, {} sends pending",
            pending_recvs.len(),
            pending_sends.len()
        );
        let mut k = 0;
        while k < pending_recvs.len() {
            let (at, r, room, key, post) = pending_recvs[k];
            match t.engines[at].test(r).unwrap() {
                None => k += 1,
                Some((st, buf)) => {
                    pending_recvs.swap_remove(k);
                    let id = st.match_info & ((1 << 52) - 1);
                    let m = by_id[&id];
                    assert!(got.insert(id), "message {id} received twice");
                    assert_eq!(m.to, at);
                    assert_eq!(st.source, peers[at][m.from]);
                    assert_eq!(st.match_info, m.match_info());
                    assert_eq!(st.msg_len, m.len);
                    let xfer = m.len.min(room);
                    assert_eq!(st.xfer_len, xfer);
                    let code = if xfer < m.len {
                        Code::Truncated
                    } else {
                        Code::Success
                    };
                    assert_eq!(st.code, code);
                    let buf = buf.unwrap().to_vec();
                    assert_eq!(buf[..xfer], pattern(id, xfer)[..], "bytes of {id}");
                    order
                        .entry(key)
                        .or_default()
                        .push((post, m.from, sent_order[&id]));
                }
            }
        }
        let mut k = 0;
        while k < pending_sends.len() {
            let (at, r, id) = pending_sends[k];
            match t.engines[at].test(r).unwrap() {
                None => k += 1,
                Some((st, _)) => {
                    pending_sends.swap_remove(k);
                    assert_eq!(st.code, Code::Success, "send {id}");
                    assert_eq!(st.context, id);
                    sends_done += 1;
                }
            }
        }
        if !(t.step() || pending_recvs.is_empty() && pending_sends.is_empty()) {
            panic!(
                "network idle with {} receives and {} sends pending",
                pending_recvs.len(),
                pending_sends.len()
            );
        }
    }
    assert_eq!(got.len(), messages);
    assert_eq!(sends_done, messages);
    assert_sender_order(order);
    if loss > 0.0 {
        let st: u64 = t.engines.iter().map(|e| e.stats().retransmits).sum();
        assert!(st > 0, "loss without retransmission?");
        assert!(t.lost > 0 && t.duplicated > 0);
    }
}

#[test]
fn randomized_messages_no_loss() {
    run(0.0, 3000, 1);
}

#[test]
fn randomized_messages_one_percent_loss() {
    run(0.01, 3000, 2);
}

/// The same in Open-MX's frames: at its 9000-byte MTU (mediums in 8 KiB fragments up to
/// 32 KiB, rendezvous above) with 5% loss, and at 1500 bytes with 20%; synchronous sends
/// by rendezvous.
#[test]
fn randomized_messages_open_mx_frames_with_loss() {
    let cfg = Config {
        mtu: myrix_wire::codec::omx::MTU,
        ..Config::default()
    };
    run_with::<myrix_wire::codec::Omx>(0.05, 2000, 7, cfg.clone());
    // And on a 1500-byte link: mediums of one frame, longer messages by rendezvous.
    let small = Config {
        mtu: 1514,
        medium_max: 1514 - myrix_wire::codec::Omx::head_len(myrix_wire::mx::Kind::Medium),
        ..Config::default()
    };
    run_with::<myrix_wire::codec::Omx>(0.20, 1500, 8, small);
}

#[test]
fn randomized_messages_twenty_percent_loss() {
    run(0.20, 2000, 3);
}

#[test]
fn randomized_messages_lossless_transport() {
    // The shm/self mode: no acks, no timers, frames in order per pair.
    let n = 3;
    let cfg = Config {
        reliable_transport: true,
        ..Config::default()
    };
    let (mut t, peers) = mesh(n, &cfg, NetConfig::lossless(5));
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut recvs = Vec::new();
    let mut fast = 0;
    for id in 0..2000u64 {
        let from = rng.gen_range(0..n);
        let to = (from + 1 + rng.gen_range(0..n - 1)) % n;
        let len = length(&mut rng, true);
        let data = pattern(id, len);
        let now = t.now;
        if rng.gen_bool(0.5) {
            // The endpoint's fast path: the frame comes straight back when it can.
            let mut frame = vec![0; cfg.mtu];
            let (_, out) = t.engines[from]
                .isend_into(now, peers[from][to], &[&data], id, id, false, &mut frame)
                .unwrap();
            if let Some((dst, n)) = out {
                fast += 1;
                t.send_frame(from, dst, &frame[..n]);
            }
        } else {
            t.engines[from]
                .isend(now, peers[from][to], &[&data], id, id, false)
                .unwrap();
        }
        let r = t.engines[to]
            .irecv(now, RecvBuf::One(vec![0; len]), id, u64::MAX, 0)
            .unwrap();
        recvs.push((to, r, id, len));
        for _ in 0..rng.gen_range(0..3) {
            t.step();
        }
    }
    for (to, r, id, len) in recvs {
        let (st, buf) = wait_buf(&mut t, to, r);
        assert_eq!((st.code, st.xfer_len), (Code::Success, len));
        assert_eq!(buf.unwrap().to_vec(), pattern(id, len));
    }
    assert!(fast > 100, "the send fast path ran {fast} times");
    let fast_recvs: u64 = t.engines.iter().map(|e| e.stats().fast_recvs).sum();
    assert!(
        fast_recvs > 100,
        "the receive fast path ran {fast_recvs} times"
    );
}

/// More seeds, for soak runs: `MYRIX_SOAK=50 cargo test -p myrix-mx --test random soak`.
#[test]
fn soak() {
    let n: u64 = std::env::var("MYRIX_SOAK")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    for seed in 0..n {
        for loss in [0.0, 0.01, 0.2] {
            run(loss, 1000, 1000 + seed);
        }
    }
}

/// The receiver's side of `Endpoint::recv` on a lossless transport, driven by hand:
/// one blocking receive after another, waiting without a request where the engine
/// allows it (`DirectRecv`), falling back to a posted receive when a frame left a
/// matching message in the unexpected queue; some receives are posted ahead with
/// `irecv` instead. Two senders send messages of every class and matching category
/// to engine 0 while the network runs.
fn blocking_run(messages: usize, seed: u64) {
    use myrix_mx_proto::engine::DirectRecv;
    use myrix_mx_proto::testnet::TestNet;

    let n = 3;
    let cfg = Config {
        reliable_transport: true,
        ..Config::default()
    };
    let (mut t, peers) = mesh(n, &cfg, NetConfig::lossless(seed));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut msgs = Vec::new();
    let mut specs = Vec::new();
    for id in 0..messages as u64 {
        let from = rng.gen_range(1..n);
        let cat = [BY_SENDER, EXACT, WILDCARD][rng.gen_range(0..3)];
        let len = length(&mut rng, cat == EXACT);
        let m = Msg {
            id,
            from,
            to: 0,
            cat,
            len,
            sync: rng.gen_bool(0.1),
        };
        let mi = m.match_info();
        specs.push(match cat {
            EXACT => (mi, u64::MAX, len + rng.gen_range(0..4), mi),
            BY_SENDER => {
                let mi = (BY_SENDER << 60) | ((from as u64) << 52);
                let room = if rng.gen_bool(0.1) { 100 } else { SHARED_MAX };
                (mi, CAT_MASK | SENDER_MASK, room, mi)
            }
            _ => {
                let room = if rng.gen_bool(0.1) { 100 } else { SHARED_MAX };
                (WILDCARD << 60, CAT_MASK, room, WILDCARD << 60)
            }
        });
        msgs.push(m);
    }
    // Receives roughly in the order the messages are sent, as a program that expects
    // them would post them: shuffled within windows of a few.
    for w in specs.chunks_mut(4) {
        w.shuffle(&mut rng);
    }

    // The senders' side: the next message leaves now and then as the network runs.
    struct Senders {
        next: usize,
        sends: Vec<(usize, Request)>,
    }
    let mut tx = Senders {
        next: 0,
        sends: Vec::new(),
    };
    let pace = |t: &mut TestNet, rng: &mut ChaCha8Rng, tx: &mut Senders| {
        if tx.next < msgs.len() && rng.gen_bool(0.3) {
            let m = &msgs[tx.next];
            let now = t.now;
            let data = pattern(m.id, m.len);
            let r = t.engines[m.from]
                .isend(
                    now,
                    peers[m.from][0],
                    &[&data],
                    m.match_info(),
                    m.id,
                    m.sync,
                )
                .unwrap();
            tx.sends.push((m.from, r));
            tx.next += 1;
        }
        if !t.step() && tx.next == msgs.len() {
            return false;
        }
        true
    };
    let mut posted: Vec<(Request, u64, usize)> = Vec::new();
    // Per completed receive: its status, the bytes, its place in posting order, its
    // order key.
    type Done = (myrix_mx_proto::Status, Vec<u8>, usize, u64);
    let mut done: Vec<Done> = Vec::new();
    // How often each way was taken: straight from a frame, after a frame that went the
    // general way but left nothing for us, and back to a posted receive.
    let (mut direct, mut passed, mut fell_back) = (0, 0, 0);
    let collect =
        |t: &mut TestNet, posted: &mut Vec<(Request, u64, usize)>, done: &mut Vec<Done>| {
            posted.retain(|&(r, key, post)| match t.engines[0].test(r).unwrap() {
                Some((st, buf)) => {
                    let b = buf.unwrap().to_vec();
                    done.push((st, b, post, key));
                    false
                }
                None => true,
            });
        };
    for (post, &(mi, mask, room, key)) in specs.iter().enumerate() {
        let buf = RecvBuf::One(vec![0; room]);
        if rng.gen_bool(0.1) {
            let r = t.engines[0].irecv(t.now, buf, mi, mask, 0).unwrap();
            posted.push((r, key, post));
            continue;
        }
        let mut fallback = None;
        if t.engines[0].direct_ok(mi, mask) {
            t.direct.insert(
                0,
                DirectRecv {
                    match_info: mi,
                    mask,
                    buf,
                    done: None,
                    slow: false,
                },
            );
            loop {
                assert!(pace(&mut t, &mut rng, &mut tx), "blocked for ever");
                collect(&mut t, &mut posted, &mut done);
                let d = t.direct.get_mut(&0).unwrap();
                if let Some(st) = d.done {
                    let d = t.direct.remove(&0).unwrap();
                    let b = d.buf.to_vec();
                    done.push((st, b, post, key));
                    direct += 1;
                    break;
                }
                if d.slow {
                    if !t.engines[0].direct_ok(mi, mask) {
                        fallback = Some(t.direct.remove(&0).unwrap().buf);
                        fell_back += 1;
                        break;
                    }
                    d.slow = false;
                    passed += 1;
                }
            }
        } else {
            fallback = Some(buf);
        }
        if let Some(buf) = fallback {
            let r = t.engines[0].irecv(t.now, buf, mi, mask, 0).unwrap();
            loop {
                collect(&mut t, &mut posted, &mut done);
                if let Some((st, b)) = t.engines[0].test(r).unwrap() {
                    let b = b.unwrap().to_vec();
                    done.push((st, b, post, key));
                    break;
                }
                assert!(pace(&mut t, &mut rng, &mut tx), "blocked for ever");
            }
        }
    }
    while !posted.is_empty() || tx.next < msgs.len() {
        collect(&mut t, &mut posted, &mut done);
        if !pace(&mut t, &mut rng, &mut tx) {
            collect(&mut t, &mut posted, &mut done);
            assert!(
                posted.is_empty(),
                "{} posted receives never matched",
                posted.len()
            );
        }
    }
    // Every message once, with its bytes and status; per receive key and sender, in
    // the order sent (ids rise with each sender's sending order).
    assert_eq!(done.len(), messages);
    let mut seen = HashSet::new();
    // Each sender sends in id order.
    let mut order: HashMap<u64, Vec<(usize, usize, usize)>> = HashMap::new();
    let room_of: HashMap<usize, usize> = specs.iter().enumerate().map(|(i, s)| (i, s.2)).collect();
    for (st, bytes, post, key) in done {
        let (code, msg_len, xfer, mi) = (st.code, st.msg_len, st.xfer_len, st.match_info);
        let id = mi & ((1 << 52) - 1);
        let m = &msgs[id as usize];
        assert!(seen.insert(id), "message {id} received twice");
        assert_eq!((mi, msg_len), (m.match_info(), m.len));
        let want = m.len.min(room_of[&post]);
        assert_eq!(xfer, want, "message {id}");
        let c = if want < m.len {
            Code::Truncated
        } else {
            Code::Success
        };
        assert_eq!(code, c);
        assert_eq!(bytes[..xfer], pattern(id, xfer)[..], "bytes of {id}");
        order
            .entry(key)
            .or_default()
            .push((post, m.from, id as usize));
    }
    assert_sender_order(order);
    for (from, r) in tx.sends {
        let mut st = None;
        assert!(t.run_until(1_000_000_000, |t| {
            st = t.engines[from].test(r).unwrap();
            st.is_some()
        }));
        assert_eq!(st.unwrap().0.code, Code::Success);
    }
    assert!(
        direct > messages / 10 && passed > 10 && fell_back > 10,
        "direct {direct}, passed {passed}, fell back {fell_back}: every way must be taken"
    );
    eprintln!("seed {seed}: direct {direct}, passed {passed}, fell back {fell_back}");
}

#[test]
fn randomized_blocking_receives_lossless_transport() {
    for seed in 1..=3 {
        blocking_run(1500, seed);
    }
}
