//! What the loop-network tests of point-to-point share (`p2p_rules`, `p2p_cancel`):
//! a network of engines, driving them until a condition holds, and the waits and
//! receives most tests make.

#![allow(dead_code)]

pub mod reference;

use myrix_mpi::p2p::loopnet::{LoopConfig, LoopFabric, LoopNet};
use myrix_mpi::p2p::{Engine, ReqId, Status};

pub type E = Engine<LoopFabric>;

/// The eager limit of every test network.
pub const EAGER: usize = 64;

/// `n` engines over a loop network with random delivery from `seed`.
pub fn net(n: u32, seed: u64) -> (LoopNet, Vec<E>) {
    LoopNet::engines(
        n,
        LoopConfig {
            seed,
            eager_limit: EAGER,
            ..LoopConfig::default()
        },
    )
}

/// Progresses every engine until `done` holds (bounded: a hang fails the test).
pub fn drive(es: &mut [E], mut done: impl FnMut(&mut [E]) -> bool) {
    for _ in 0..100_000 {
        if done(es) {
            return;
        }
        for e in es.iter_mut() {
            e.progress().unwrap();
        }
    }
    panic!("no progress");
}

/// Drives until request `r` of `rank` completes; its status.
pub fn wait(es: &mut [E], rank: usize, r: ReqId) -> Status {
    drive(es, |es| es[rank].is_complete(r));
    es[rank].test(r).unwrap().unwrap()
}

/// Posts a receive on context 0 into `b`.
pub fn irecv(es: &mut [E], at: usize, src: Option<u32>, tag: Option<i32>, b: &mut [u8]) -> ReqId {
    // SAFETY: every test keeps `b` alive and untouched until the receive is complete.
    unsafe { es[at].irecv(src, 0, tag, b.as_mut_ptr(), b.len()) }.unwrap()
}
