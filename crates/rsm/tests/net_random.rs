//! Randomized: three importer nodes (threads of this process, each its own controller
//! on its own loopback port) make thousands of puts, gets, scalar accesses, barriers
//! and signals on one exporter's segment, each checked against a model of its own
//! region of the segment; at the end the exporter's memory is compared with every
//! model, and the signals counted.

mod net_common;

use std::time::Duration;

use myrix_rsm::{BarrierMode, BarrierType, ExportFlags, NodeId, Perm};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const REGION: usize = 24 * 1024;
const IMPORTERS: usize = 3;
const OPS: usize = 1500;

#[test]
fn random_ops_against_a_model() {
    let nodes = [81, 82, 83, 84];
    let c = net_common::controllers(&nodes);
    let e = c[0]
        .export_create(REGION * IMPORTERS, ExportFlags::default())
        .unwrap();
    let id = e.publish(None, &[]).unwrap();
    let seed: u64 = std::env::var("RSM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("RSM_SEED={seed}");

    let models: Vec<(Vec<u8>, usize)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..IMPORTERS)
            .map(|k| {
                let ctl = c[k + 1].clone();
                s.spawn(move || {
                    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (k as u64 * 0x9e37));
                    let i = ctl.import_connect(NodeId(81), id, Perm::RDWR).unwrap();
                    let base = k * REGION;
                    let mut model = vec![0u8; REGION];
                    let mut signals = 0usize;
                    let mut bar = None;
                    for op in 0..OPS {
                        let off = rng.gen_range(0..REGION);
                        let max = if rng.gen_bool(0.05) { 16384 } else { 64 };
                        let n = rng.gen_range(1..=max).min(REGION - off);
                        match rng.gen_range(0..100) {
                            0..=44 => {
                                let d: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                                i.put(base + off, &d).unwrap();
                                model[off..off + n].copy_from_slice(&d);
                            }
                            45..=79 => {
                                let mut out = vec![0u8; n];
                                i.get(base + off, &mut out).unwrap();
                                assert!(
                                    out == model[off..off + n],
                                    "importer {k} op {op}: get {off}+{n} differs"
                                );
                            }
                            80..=87 => {
                                let o = off & !7;
                                let v: u64 = rng.gen();
                                i.put_scalars(base + o, &[v]).unwrap();
                                model[o..o + 8].copy_from_slice(&v.to_ne_bytes());
                                let mut w = [0u64];
                                i.get_scalars(base + o, &mut w).unwrap();
                                assert_eq!(w[0], v, "importer {k} op {op}: scalar");
                            }
                            88..=95 => {
                                // Switch between implicit and explicit scopes.
                                match bar.take() {
                                    None => {
                                        i.set_mode(BarrierMode::Explicit).unwrap();
                                        let mut b = i.init_barrier(BarrierType::Segment).unwrap();
                                        b.open().unwrap();
                                        bar = Some(b);
                                    }
                                    Some(mut b) => {
                                        b.close().unwrap();
                                        i.set_mode(BarrierMode::Implicit).unwrap();
                                    }
                                }
                            }
                            _ => {
                                i.signal_post(Default::default()).unwrap();
                                signals += 1;
                            }
                        }
                    }
                    if let Some(mut b) = bar.take() {
                        b.close().unwrap();
                    }
                    (model, signals)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });

    // Every write is in the exporter's memory (each importer's last close or implicit
    // put returned), and every signal arrived.
    // SAFETY: the export's live memory; the importers are done.
    #[allow(unsafe_code)]
    let mem = unsafe { std::slice::from_raw_parts(e.as_ptr(), REGION * IMPORTERS) };
    let mut total = 0;
    for (k, (model, signals)) in models.iter().enumerate() {
        assert!(
            mem[k * REGION..(k + 1) * REGION] == model[..],
            "importer {k}: exporter memory differs from the model"
        );
        total += signals;
    }
    let mut got = 0;
    while got < total {
        e.signal_wait(Some(Duration::from_secs(5)))
            .unwrap_or_else(|x| panic!("{got} of {total} signals, then {x:?}"));
        got += 1;
    }
    assert!(e.signal_wait(Some(Duration::from_millis(20))).is_err());
}
