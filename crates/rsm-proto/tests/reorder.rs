//! Frames held back far longer than the rest, as `.ci/netns.sh`'s slow HTB class does
//! where the kernel has no netem (one frame in ten through a 20 Mbit/s class that can
//! queue hundreds of milliseconds): by the time such a frame arrives its peer may have
//! sent more than half of the 16-bit sequence space. Its ack and its data must be
//! recognised as old, not taken as new (an ack "ahead" dropped frames never delivered,
//! so the peer was declared unreachable; an old write held as "early" replaced the
//! write with that number).
//!
//! Two engines each import the other's segment and put random data both ways, a
//! barrier after each burst, every byte checked against a model, until each side has
//! sent several wraps of the sequence space.

mod common;

use common::{Net, NetConfig};
use myrix_rsm_proto::engine::{Config, Event, Import};
use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, RsmError, SegmentId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const USER: Credentials = Credentials { uid: 1, gid: 1 };
const SEG: SegmentId = SegmentId(0x8000_0042);
const LEN: usize = 64 * 1024;

fn connect(net: &mut Net, from: usize, to: usize) -> Import {
    let imp = net.engines[from]
        .connect(to, NodeId(to as u32), SEG, Perm::RDWR, USER)
        .unwrap();
    let r = net.wait_for(from, |e| match e {
        Event::Connected { import, result } if *import == imp => Some(*result),
        _ => None,
    });
    assert_eq!(r, Ok(LEN as u64));
    imp
}

/// Runs bursts until each engine has sent `frames` frames; returns the frames sent and
/// those dropped as old.
fn run(seed: u64, slow_ns: u64, frames: u64) -> (u64, u64) {
    let net_cfg = NetConfig {
        latency_ns: 2_000,
        jitter_ns: 3_000,
        loss: 0.02,
        duplicate: 0.01,
        slow: 0.10,
        slow_ns,
        seed,
    };
    // Small frames: many sequence numbers per byte.
    let cfg = Config {
        mtu: 256,
        ..Config::fast_timers()
    };
    let mut net = Net::new(2, cfg, net_cfg);
    let mut model = [vec![0u8; LEN], vec![0u8; LEN]];
    for i in 0..2 {
        net.mems[i].insert(SEG, vec![0; LEN]);
        net.engines[i]
            .publish(SEG, Acl::Open(Perm(0o666)), USER)
            .unwrap();
    }
    let imps = [connect(&mut net, 0, 1), connect(&mut net, 1, 0)];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut round = 0;
    while net.engines.iter().any(|e| e.stats().frames_out < frames) {
        round += 1;
        let mut flushes = Vec::new();
        for (from, imp) in imps.iter().enumerate() {
            let to = 1 - from;
            for _ in 0..rng.gen_range(1..8) {
                let len = rng.gen_range(1..=4096);
                let off = rng.gen_range(0..=LEN - len);
                let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                net.engines[from].put(*imp, off as u64, &data).unwrap();
                model[to][off..off + len].copy_from_slice(&data);
            }
            flushes.push((from, net.engines[from].flush(*imp).unwrap()));
        }
        for (from, f) in flushes {
            let r = net.wait_for(from, |e| match e {
                Event::BarrierDone { flush, result, .. } if *flush == f => Some(*result),
                Event::PeerUnreachable { .. } => Some(Err(RsmError::RemoteNodeUnreachable)),
                _ => None,
            });
            assert_eq!(r, Ok(()), "round {round}: engine {from}'s barrier");
        }
        for (i, m) in model.iter().enumerate() {
            assert!(
                net.mems[i][&SEG] == *m,
                "round {round}: engine {i}'s memory differs from the model"
            );
        }
    }
    eprintln!(
        "simulated {} ms: {:?}",
        net.now / 1_000_000,
        net.engines.iter().map(|e| e.stats()).collect::<Vec<_>>()
    );
    (
        net.engines.iter().map(|e| e.stats().frames_out).sum(),
        net.engines.iter().map(|e| e.stats().old_frames).sum(),
    )
}

/// Frames held back a second while the peers send hundreds of thousands (about 90 000
/// a side in that time): more than a lap of the 16-bit numbers. Before the engine knew
/// old frames, engine 0 waited forever for a flush a stale ack had released. (400 ms
/// was enough while every timeout resent the whole window: those resends made each
/// side send twice as many frames, and number them faster.)
#[test]
fn frames_delayed_past_a_sequence_wrap_are_old_not_new() {
    let (sent, old) = run(7, 1_000_000_000, 300_000);
    assert!(sent >= 600_000);
    assert!(old > 0, "no frame came back from a lap ago");
}

/// Delays a little longer than the resend interval only: the usual reordering.
#[test]
fn frames_delayed_past_their_resend_are_duplicates() {
    let (_, old) = run(8, 500_000, 20_000);
    assert_eq!(old, 0, "a frame a few hundred numbers late is not old");
}
