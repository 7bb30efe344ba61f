//! The randomized RSM workload shared by the network tests (`net_random.rs`, threads of
//! one process on loopback; `net_netns_random.rs`, processes in two namespaces over a
//! lossy veth): one importer's random puts, gets, scalar accesses of every width with
//! repeat counts, scatter/gather lists, barriers (implicit and explicit mode, `order`),
//! refused accesses and signals, each checked against a model of the importer's own
//! stripe of the segment.
//!
//! Importer `k` owns stripe `k` (`k * stripe .. (k + 1) * stripe`) alone, so every get
//! has one right answer: its model. [`run`] draws every random number whether or not
//! it is given an import, so a process that only has the seed (the exporter, at the
//! end) replays the same operations on the model alone and gets the same bytes and the
//! same signal count, without any of it crossing the network.

#![allow(dead_code)]

use myrix_rsm::import::MAX_SGIO;
use myrix_rsm::{BarrierMode, BarrierType, Import, IoVec, IoVecMut, RsmError, SignalFlags};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The shape of one importer's run.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Bytes of the stripe each importer owns.
    pub stripe: usize,
    /// Operations per importer.
    pub ops: usize,
    /// The longest bulk put or get (one in twenty bulk accesses is drawn up to this;
    /// the others up to 300 bytes), so large puts are pipelined and large gets pulled
    /// in blocks now and then.
    pub big: usize,
}

/// What one importer did: the model of its stripe and what it counted.
#[derive(Debug, Default)]
pub struct Outcome {
    pub model: Vec<u8>,
    /// Signals it posted to the exporter.
    pub signals: u32,
    /// Gets (bulk, scalar, gather) whose bytes were compared with the model.
    pub checked_gets: u32,
    /// Barrier scopes closed.
    pub scopes: u32,
    /// Refused accesses checked.
    pub refusals: u32,
}

/// Importer `k`'s own random stream, from the run's seed.
fn rng_for(seed: u64, k: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ (k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// Writes `vals` as `w`-byte scalars (little-endian truncations) at `o`.
fn put_width(i: &Import, w: usize, o: usize, vals: &[u64]) -> Result<(), RsmError> {
    match w {
        1 => i.put_scalars(o, &vals.iter().map(|&v| v as u8).collect::<Vec<_>>()),
        2 => i.put_scalars(o, &vals.iter().map(|&v| v as u16).collect::<Vec<_>>()),
        4 => i.put_scalars(o, &vals.iter().map(|&v| v as u32).collect::<Vec<_>>()),
        _ => i.put_scalars(o, vals),
    }
}

/// Reads `n` `w`-byte scalars at `o`, widened to u64.
fn get_width(i: &Import, w: usize, o: usize, n: usize) -> Vec<u64> {
    fn rd<T: myrix_rsm::Scalar + Default + Copy + Into<u64>>(
        i: &Import,
        o: usize,
        n: usize,
    ) -> Vec<u64> {
        let mut v = vec![T::default(); n];
        i.get_scalars(o, &mut v).unwrap();
        v.into_iter().map(Into::into).collect()
    }
    match w {
        1 => rd::<u8>(i, o, n),
        2 => rd::<u16>(i, o, n),
        4 => rd::<u32>(i, o, n),
        _ => rd::<u64>(i, o, n),
    }
}

/// Runs importer `k`'s operations on its model, and on `imp` when given (which must be
/// connected read-write to a segment of at least `(k + 1) * plan.stripe` bytes, in
/// implicit mode). Panics, naming the importer and the operation, at the first get
/// that differs from the model or the first unexpected error.
pub fn run(seed: u64, k: usize, plan: &Plan, imp: Option<&Import>) -> Outcome {
    let stripe = plan.stripe;
    let mut rng = rng_for(seed, k);
    let base = k * stripe;
    let mut o = Outcome {
        model: vec![0u8; stripe],
        ..Outcome::default()
    };
    // The scope's barrier, created on first use (RSMAPI's init_barrier), and a second
    // one never opened, for the misuse refusals.
    let mut bar = None;
    let mut idle = imp.map(|i| i.init_barrier(BarrierType::Segment).unwrap());
    let mut open = false;
    for op in 0..plan.ops {
        let at = |what: &str| format!("importer {k} op {op} (seed {seed}): {what}");
        match rng.gen_range(0..100) {
            // Bulk put.
            0..=27 => {
                let off = rng.gen_range(0..stripe);
                let max = if rng.gen_bool(0.05) { plan.big } else { 300 };
                let n = rng.gen_range(1..=max.min(stripe - off));
                let data: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                o.model[off..off + n].copy_from_slice(&data);
                if let Some(i) = imp {
                    i.put(base + off, &data)
                        .unwrap_or_else(|e| panic!("{}", at(&format!("put: {e:?}"))));
                }
            }
            // Scalars of every width with a repeat count, read back at the same width.
            28..=41 => {
                let w = [1usize, 2, 4, 8][rng.gen_range(0..4)];
                let cnt = rng.gen_range(1..=16);
                let off = rng.gen_range(0..=(stripe - w * cnt) / w) * w;
                let vals: Vec<u64> = (0..cnt).map(|_| rng.gen()).collect();
                for (j, v) in vals.iter().enumerate() {
                    o.model[off + j * w..off + (j + 1) * w].copy_from_slice(&v.to_le_bytes()[..w]);
                }
                if let Some(i) = imp {
                    put_width(i, w, base + off, &vals)
                        .unwrap_or_else(|e| panic!("{}", at(&format!("put {w}-byte: {e:?}"))));
                    let back = get_width(i, w, base + off, cnt);
                    let want: Vec<u64> = vals
                        .iter()
                        .map(|&v| {
                            if w == 8 {
                                v
                            } else {
                                v & ((1u64 << (8 * w)) - 1)
                            }
                        })
                        .collect();
                    assert_eq!(back, want, "{}", at(&format!("{w}-byte scalars")));
                    o.checked_gets += 1;
                }
            }
            // A scatter list of 1 to 16 pieces (they may overlap: applied in order).
            42..=50 => {
                let pieces = rng.gen_range(1..=MAX_SGIO);
                let mut v = Vec::with_capacity(pieces);
                for _ in 0..pieces {
                    let off = rng.gen_range(0..stripe - 64);
                    let n = rng.gen_range(1..=64);
                    let data: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                    o.model[off..off + n].copy_from_slice(&data);
                    v.push((base + off, data));
                }
                if let Some(i) = imp {
                    let ios: Vec<IoVec> = v
                        .iter()
                        .map(|(off, d)| IoVec {
                            offset: *off,
                            local: d,
                        })
                        .collect();
                    i.putv(&ios)
                        .unwrap_or_else(|e| panic!("{}", at(&format!("putv: {e:?}"))));
                }
            }
            // Bulk get, or a gather list of up to four pieces.
            51..=70 => {
                let off = rng.gen_range(0..stripe);
                let max = if rng.gen_bool(0.05) { plan.big } else { 500 };
                let n = rng.gen_range(1..=max.min(stripe - off));
                let pieces = rng.gen_range(1..=4usize).min(n);
                if let Some(i) = imp {
                    let mut out = vec![0u8; n];
                    if pieces == 1 {
                        i.get(base + off, &mut out)
                            .unwrap_or_else(|e| panic!("{}", at(&format!("get: {e:?}"))));
                    } else {
                        let step = n / pieces;
                        let mut g: Vec<IoVecMut> = Vec::with_capacity(pieces);
                        let mut rest = &mut out[..];
                        for p in 0..pieces {
                            let len = if p + 1 == pieces { rest.len() } else { step };
                            let (a, b) = rest.split_at_mut(len);
                            g.push(IoVecMut {
                                offset: base + off + p * step,
                                local: a,
                            });
                            rest = b;
                        }
                        i.getv(&mut g)
                            .unwrap_or_else(|e| panic!("{}", at(&format!("getv: {e:?}"))));
                    }
                    assert!(
                        out == o.model[off..off + n],
                        "{}",
                        at(&format!("get {off}+{n} differs from the model"))
                    );
                    o.checked_gets += 1;
                }
            }
            // Barriers: open a scope (switching to explicit mode three times in four),
            // order inside it, or close it (back to implicit), reading the stripe back.
            71..=80 => {
                let explicit = rng.gen_bool(0.75);
                let order = rng.gen_bool(0.3);
                let read_back = rng.gen_bool(0.5);
                if let Some(i) = imp {
                    let b =
                        bar.get_or_insert_with(|| i.init_barrier(BarrierType::Segment).unwrap());
                    if !open {
                        if explicit {
                            i.set_mode(BarrierMode::Explicit).unwrap();
                        }
                        b.open()
                            .unwrap_or_else(|e| panic!("{}", at(&format!("open: {e:?}"))));
                    } else if order {
                        b.order()
                            .unwrap_or_else(|e| panic!("{}", at(&format!("order: {e:?}"))));
                    } else {
                        b.close()
                            .unwrap_or_else(|e| panic!("{}", at(&format!("close: {e:?}"))));
                        i.set_mode(BarrierMode::Implicit).unwrap();
                        o.scopes += 1;
                        if read_back {
                            // The scope's writes are in the exporter's memory.
                            let mut out = vec![0u8; stripe];
                            i.get(base, &mut out).unwrap();
                            assert!(out == o.model, "{}", at("stripe after close"));
                            o.checked_gets += 1;
                        }
                    }
                }
                if !open || !order {
                    open = !open;
                }
            }
            // Refused: outside the segment, misaligned, bad lists, barrier misuse.
            // Nothing changes.
            81..=87 => {
                let past = rng.gen_range(1..1000usize);
                if let (Some(i), Some(idle)) = (imp, idle.as_mut()) {
                    let len = i.len();
                    assert_eq!(i.put(len - 2, &[1, 2, 3]), Err(RsmError::BadLength));
                    assert_eq!(i.put(len + past, &[1]), Err(RsmError::BadOffset));
                    let mut one = [0u8];
                    assert_eq!(i.get(len + past, &mut one), Err(RsmError::BadOffset));
                    assert_eq!(
                        i.put_scalars(base + 1, &[1u32]),
                        Err(RsmError::MisalignedOffset)
                    );
                    let too_many: Vec<IoVec> = (0..=MAX_SGIO)
                        .map(|j| IoVec {
                            offset: base + j,
                            local: &[0xff],
                        })
                        .collect();
                    assert_eq!(i.putv(&too_many), Err(RsmError::BadSgio));
                    assert_eq!(idle.close(), Err(RsmError::BarrierNotOpened));
                    assert_eq!(idle.order(), Err(RsmError::BarrierNotOpened));
                    o.refusals += 1;
                }
            }
            // A signal to the exporter.
            _ => {
                o.signals += 1;
                if let Some(i) = imp {
                    i.signal_post(SignalFlags::default())
                        .unwrap_or_else(|e| panic!("{}", at(&format!("signal: {e:?}"))));
                }
            }
        }
    }
    if let (Some(b), true) = (bar.as_mut(), open) {
        b.close().unwrap();
        o.scopes += 1;
    }
    if let Some(i) = imp {
        i.set_mode(BarrierMode::Implicit).unwrap();
    }
    o
}

/// The seed of a run: `RSM_SEED` when set (to rerun a failing one), else random.
/// Printed, so a failure can be replayed.
pub fn seed() -> u64 {
    let seed = std::env::var("RSM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("RSM_SEED={seed}");
    seed
}
