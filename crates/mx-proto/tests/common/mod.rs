//! Shared set-up for the engine tests: engines on a test network, connected pairwise.
#![allow(dead_code)]

use myrix_mx_proto::engine::{Code, Codec, Config, Engine, Mx, PeerId, Request, Status};
use myrix_mx_proto::testnet::{NetConfig, TestNet};
use myrix_mx_proto::RecvBuf;

pub const KEY: u32 = 0x5eed;

pub fn nic(i: usize) -> u64 {
    0x02_00_00_00_00_00 | i as u64
}

pub fn engines(n: usize, cfg: &Config) -> Vec<Engine<usize>> {
    engines_with::<Mx>(n, cfg)
}

/// [`engines`] in frame layout `C`.
pub fn engines_with<C: Codec>(n: usize, cfg: &Config) -> Vec<Engine<usize, C>> {
    (0..n)
        .map(|i| Engine::with_codec(cfg.clone(), nic(i), 0, KEY, 0x1000 + i as u32))
        .collect()
}

#[allow(clippy::needless_range_loop)]
/// A network of `n` engines, each connected to every other; `peers[a][b]` is b as a sees it.
pub fn mesh(n: usize, cfg: &Config, net: NetConfig) -> (TestNet, Vec<Vec<PeerId>>) {
    mesh_with::<Mx>(n, cfg, net)
}

#[allow(clippy::needless_range_loop)]
/// [`mesh`] in frame layout `C`.
pub fn mesh_with<C: Codec>(
    n: usize,
    cfg: &Config,
    net: NetConfig,
) -> (TestNet<C>, Vec<Vec<PeerId>>) {
    let mut t = TestNet::new(net, engines_with::<C>(n, cfg));
    let mut peers = vec![vec![PeerId(u16::MAX); n]; n];
    for a in 0..n {
        for b in 0..n {
            if a == b {
                continue;
            }
            let now = t.now;
            let r = t.engines[a].iconnect(now, b, nic(b), 0, KEY, 0).unwrap();
            let st = wait(&mut t, a, r);
            assert_eq!(st.code, Code::Success);
            peers[a][b] = st.source;
        }
    }
    (t, peers)
}

/// Steps the network until request `r` of engine `e` completes.
pub fn wait<C: Codec>(t: &mut TestNet<C>, e: usize, r: Request) -> Status {
    wait_buf(t, e, r).0
}

pub fn wait_buf<C: Codec>(t: &mut TestNet<C>, e: usize, r: Request) -> (Status, Option<RecvBuf>) {
    let mut out = None;
    let ok = t.run_until(60_000_000_000, |t| {
        if let Some(x) = t.engines[e].test(r).unwrap() {
            out = Some(x);
            true
        } else {
            false
        }
    });
    assert!(ok, "request did not complete");
    out.unwrap()
}

/// The bytes of test message `id`.
pub fn pattern(id: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| ((id as usize).wrapping_mul(31) ^ i.wrapping_mul(7) ^ (i >> 8)) as u8)
        .collect()
}
