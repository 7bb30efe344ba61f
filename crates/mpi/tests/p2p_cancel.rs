//! Cancelling sends (the retraction protocol of `p2p::cancel`) over the loop
//! network: an unmatched message is retracted and never received; a matched one is
//! not, and is received whole; under random interleavings of sends, cancels, receives
//! and deferred data, every message is either cancelled at its sender or received
//! exactly once, never both, never neither.

mod common;

use common::{drive, irecv, net, wait, E, EAGER};
use myrix_mpi::p2p::{ReqId, SendMode};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The bytes of message `id`: its id in the first byte, so a receive tells which
/// message it got.
fn pattern(id: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            if i == 0 {
                id
            } else {
                (i as u8).wrapping_mul(31) ^ id
            }
        })
        .collect()
}

fn isend(es: &mut [E], from: usize, to: u32, tag: i32, d: &[u8], m: SendMode) -> ReqId {
    // SAFETY: every test keeps `d` alive until the send is complete.
    unsafe { es[from].isend(to, 0, tag, d.as_ptr(), d.len(), m) }.unwrap()
}

const LENS: [usize; 6] = [0, 1, EAGER, EAGER + 1, 3000, 20_000];
const MODES: [SendMode; 2] = [SendMode::Standard, SendMode::Sync];

#[test]
fn an_unmatched_send_is_retracted_and_never_received() {
    for seed in 0..12 {
        for &len in &LENS {
            for mode in MODES {
                for dest in [1u32, 0] {
                    let (_n, mut es) = net(2, seed);
                    let a = pattern(1, len);
                    let s = isend(&mut es, 0, dest, 5, &a, mode);
                    // The receiver may or may not have seen the message yet.
                    for _ in 0..(seed % 3) {
                        es[dest as usize].progress().unwrap();
                    }
                    es[0].cancel(s).unwrap();
                    let st = wait(&mut es, 0, s);
                    assert!(st.cancelled, "seed {seed} len {len} {mode:?} to {dest}");
                    assert_eq!((st.len, st.error), (0, None));
                    // The next message with the same envelope is the one received.
                    let b = pattern(2, len);
                    let s2 = isend(&mut es, 0, dest, 5, &b, mode);
                    let mut got = vec![0u8; len];
                    let r = irecv(&mut es, dest as usize, None, None, &mut got);
                    let st = wait(&mut es, dest as usize, r);
                    assert_eq!((st.source, st.tag, st.len), (0, 5, len));
                    assert_eq!(got, b);
                    assert!(!wait(&mut es, 0, s2).cancelled);
                    // Nothing else is there, and nothing is left behind.
                    drive(&mut es, |_| false_after(4));
                    assert_eq!(es[dest as usize].iprobe(None, 0, None).unwrap(), None);
                    assert_eq!(es[0].live_requests() + es[1].live_requests(), 0);
                }
            }
        }
    }
}

/// A `drive` condition true on its `n`-th call (a few rounds of progress).
fn false_after(n: u32) -> bool {
    thread_local!(static C: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });
    C.with(|c| {
        let v = c.get() + 1;
        let done = v >= n;
        c.set(if done { 0 } else { v });
        done
    })
}

#[test]
fn a_matched_or_probed_send_completes_normally() {
    for seed in 0..12 {
        for &len in &LENS {
            for mode in MODES {
                let (_n, mut es) = net(2, seed);
                let a = pattern(3, len);
                // Matched: the receive was posted first.
                let mut got = vec![0u8; len];
                let r = irecv(&mut es, 1, Some(0), Some(1), &mut got);
                let s = isend(&mut es, 0, 1, 1, &a, mode);
                es[0].cancel(s).unwrap();
                let st = wait(&mut es, 0, s);
                assert!(!st.cancelled);
                assert_eq!((st.len, st.error), (len, None));
                assert_eq!(wait(&mut es, 1, r).len, len);
                assert_eq!(got, a);
                // Taken out of matching by improbe: received through imrecv.
                let s = isend(&mut es, 0, 1, 2, &a, mode);
                let mut h = None;
                drive(&mut es, |es| {
                    h = es[1].improbe(Some(0), 0, Some(2)).unwrap();
                    h.is_some()
                });
                let (h, _) = h.unwrap();
                es[0].cancel(s).unwrap();
                es[0].cancel(s).unwrap();
                let mut got = vec![0u8; len];
                // SAFETY: `got` outlives the receive.
                let r = unsafe { es[1].imrecv(h, got.as_mut_ptr(), len) }.unwrap();
                assert!(!wait(&mut es, 0, s).cancelled);
                assert_eq!(wait(&mut es, 1, r).len, len);
                assert_eq!(got, a);
                assert_eq!(es[0].live_requests() + es[1].live_requests(), 0);
            }
        }
    }
}

/// Every message is cancelled xor received once, whatever the interleaving.
#[test]
fn random_cancels_race_receives() {
    let (mut cancelled, mut received) = (0, 0);
    for seed in 0..48 {
        let (c, r) = random_case(seed);
        cancelled += c;
        received += r;
    }
    // Both outcomes happen (the interleavings are not all one way).
    assert!(
        cancelled > 50 && received > 50,
        "{cancelled} cancelled, {received} received"
    );
}

/// (messages cancelled, messages received).
fn random_case(seed: u64) -> (usize, usize) {
    const PER: usize = 16;
    let (_n, mut es) = net(3, seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xca9c);
    // Ranks 0 and 1 send PER messages each to rank 2.
    let mut data: Vec<Vec<u8>> = Vec::new();
    let mut sends: Vec<(usize, ReqId, usize)> = Vec::new(); // (rank, request, message)
    let mut recvs: Vec<(ReqId, Vec<u8>)> = Vec::new();
    let (mut next, mut steps) = ([0usize; 2], 0);
    while next.iter().any(|&n| n < PER) || steps < 40 {
        steps += 1;
        match rng.next_u32() % 6 {
            0 | 1 => {
                let from = (rng.next_u32() % 2) as usize;
                if next[from] < PER {
                    let id = data.len();
                    let len = LENS[rng.next_u32() as usize % LENS.len()];
                    let mode = MODES[rng.next_u32() as usize % 2];
                    data.push(pattern(id as u8, len.max(1)));
                    let tag = (rng.next_u32() % 3) as i32;
                    let d = &data[id];
                    sends.push((from, isend(&mut es, from, 2, tag, d, mode), id));
                    next[from] += 1;
                }
            }
            2 => {
                if let Some(i) = (!sends.is_empty()).then(|| rng.next_u32() as usize % sends.len())
                {
                    let (from, r, _) = sends[i];
                    if es[from].is_live(r) {
                        es[from].cancel(r).unwrap();
                    }
                }
            }
            3 if recvs.len() < PER => {
                let src = [None, Some(0), Some(1)][rng.next_u32() as usize % 3];
                let tag = [None, Some(0), Some(1), Some(2)][rng.next_u32() as usize % 4];
                let mut b = vec![0u8; 20_000];
                let r = irecv(&mut es, 2, src, tag, &mut b);
                recvs.push((r, b));
            }
            _ => {
                let k = rng.next_u32() as usize % 3;
                es[k].progress().unwrap();
            }
        }
    }
    // The receives posted above get what they matched (those left unmatched are
    // cancelled); then the receiver drains what is left while the sends complete
    // (a rendezvous or synchronous send not cancelled needs its receive).
    let mut got = vec![0usize; data.len()];
    drive(&mut es, |_| false_after(8));
    for (r, b) in recvs.iter_mut() {
        if !es[2].is_complete(*r) {
            es[2].cancel(*r).unwrap();
        }
        let st = wait(&mut es, 2, *r);
        if !st.cancelled {
            let id = b[0] as usize;
            assert_eq!(
                &b[..st.len],
                &data[id][..],
                "seed {seed}: message {id}'s bytes"
            );
            got[id] += 1;
        }
    }
    let mut cancelled = vec![None; data.len()];
    for _ in 0..10_000 {
        for &(from, r, id) in &sends {
            if cancelled[id].is_none() {
                if let Some(st) = es[from].test(r).unwrap_or(None) {
                    assert_eq!(st.error, None);
                    cancelled[id] = Some(st.cancelled);
                }
            }
        }
        drive(&mut es, |_| false_after(4));
        match es[2].iprobe(None, 0, None).unwrap() {
            Some(p) => {
                let mut b = vec![0u8; p.len];
                let st = es[2].recv(Some(p.source), 0, Some(p.tag), &mut b).unwrap();
                let id = b[0] as usize;
                assert_eq!(b, data[id], "seed {seed}");
                assert_eq!(st.len, data[id].len());
                got[id] += 1;
            }
            None if cancelled.iter().all(Option::is_some) => break,
            None => {}
        }
    }
    let cancelled: Vec<bool> = cancelled
        .into_iter()
        .map(|c| c.expect("a send never completed"))
        .collect();
    for id in 0..data.len() {
        let want = usize::from(!cancelled[id]);
        assert_eq!(
            got[id], want,
            "seed {seed}: message {id} cancelled {}",
            cancelled[id]
        );
    }
    for e in &es {
        assert_eq!(e.live_requests(), 0, "seed {seed}");
    }
    let c = cancelled.iter().filter(|&&c| c).count();
    (c, data.len() - c)
}
