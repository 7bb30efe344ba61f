//! Thousands of random puts, gets, scalars, scatter/gather lists, barriers, refused
//! accesses and signals from several importers at once (threads of this process and
//! another process), each checked against a model of the memory.
//!
//! Importer K owns stripe K of the segment, so every get it makes has one right answer
//! (its model); at the end the exporter's memory must equal every stripe's model. The
//! child process's model is rebuilt here by replaying its seed.

use std::process::Command;
use std::time::Duration;

use myrix_rsm::{
    BarrierMode, BarrierType, Controller, ExportFlags, Import, IoVec, IoVecMut, Perm, RsmError,
    SegmentId, SignalFlags,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const STRIPE: usize = 8192;
const IMPORTERS: usize = 4; // threads 0..3 in this process; the child is number 3
const OPS: usize = 3000;

/// Runs importer `k`'s operations (against `imp`, or only on the model when replaying).
/// Returns the model of its stripe and how many signals it posted.
fn run(k: usize, imp: Option<&Import>) -> (Vec<u8>, u32) {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed + k as u64);
    let base = k * STRIPE;
    let mut model = vec![0u8; STRIPE];
    let mut posts = 0;
    let mut bar = imp.map(|i| {
        i.set_mode(BarrierMode::Explicit).unwrap();
        i.init_barrier(BarrierType::Segment).unwrap()
    });
    let mut open = false;
    for _ in 0..OPS {
        match rng.gen_range(0..100) {
            0..=29 => {
                let off = rng.gen_range(0..STRIPE);
                let n = rng.gen_range(1..=(STRIPE - off).min(300));
                let data: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                model[off..off + n].copy_from_slice(&data);
                if let Some(i) = imp {
                    i.put(base + off, &data).unwrap();
                }
            }
            30..=44 => {
                let w = [1usize, 2, 4, 8][rng.gen_range(0..4)];
                let cnt = rng.gen_range(1..=16);
                let off = rng.gen_range(0..=(STRIPE - w * cnt) / w) * w;
                let vals: Vec<u64> = (0..cnt).map(|_| rng.gen()).collect();
                for (j, v) in vals.iter().enumerate() {
                    model[off + j * w..off + (j + 1) * w].copy_from_slice(&v.to_le_bytes()[..w]);
                }
                if let Some(i) = imp {
                    let o = base + off;
                    match w {
                        1 => i.put_scalars(o, &vals.iter().map(|&v| v as u8).collect::<Vec<_>>()),
                        2 => i.put_scalars(o, &vals.iter().map(|&v| v as u16).collect::<Vec<_>>()),
                        4 => i.put_scalars(o, &vals.iter().map(|&v| v as u32).collect::<Vec<_>>()),
                        _ => i.put_scalars(o, &vals),
                    }
                    .unwrap();
                    let mut back = vec![0u64; cnt];
                    if w == 8 {
                        i.get_scalars(o, &mut back).unwrap();
                        assert_eq!(back, vals);
                    }
                }
            }
            45..=54 => {
                let pieces = rng.gen_range(1..=16);
                let mut v = Vec::new();
                for _ in 0..pieces {
                    let off = rng.gen_range(0..STRIPE - 16);
                    let n = rng.gen_range(1..=16);
                    let data: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                    model[off..off + n].copy_from_slice(&data);
                    v.push((base + off, data));
                }
                if let Some(i) = imp {
                    let ios: Vec<IoVec> = v
                        .iter()
                        .map(|(o, d)| IoVec {
                            offset: *o,
                            local: d,
                        })
                        .collect();
                    i.putv(&ios).unwrap();
                }
            }
            55..=74 => {
                let off = rng.gen_range(0..STRIPE);
                let n = rng.gen_range(1..=(STRIPE - off).min(500));
                if let Some(i) = imp {
                    let mut out = vec![0u8; n];
                    if rng.gen_bool(0.5) {
                        i.get(base + off, &mut out).unwrap();
                    } else {
                        let (a, b) = out.split_at_mut(n / 2);
                        let mut g = [
                            IoVecMut {
                                offset: base + off,
                                local: a,
                            },
                            IoVecMut {
                                offset: base + off + n / 2,
                                local: b,
                            },
                        ];
                        i.getv(&mut g).unwrap();
                    }
                    assert_eq!(out, model[off..off + n], "importer {k} get at {off}+{n}");
                } else {
                    // Keep the random stream the same as a real run.
                    rng.gen_bool(0.5);
                }
            }
            75..=84 => {
                if let (Some(b), Some(i)) = (bar.as_mut(), imp) {
                    if open {
                        b.close().unwrap();
                        // The scope's writes are in the exporter's memory: read them back.
                        let mut out = vec![0u8; STRIPE];
                        i.get(base, &mut out).unwrap();
                        assert_eq!(out, model);
                    } else {
                        b.open().unwrap();
                    }
                }
                open = !open;
            }
            85..=92 => {
                // Refused: outside the segment, misaligned, bad lists. Nothing changes.
                if let Some(i) = imp {
                    let len = i.len();
                    assert_eq!(i.put(len - 2, &[1, 2, 3]), Err(RsmError::BadLength));
                    assert_eq!(
                        i.put(len + rng.gen_range(1..1000usize), &[1]),
                        Err(RsmError::BadOffset)
                    );
                    assert_eq!(
                        i.put_scalars(base + 1, &[1u32]),
                        Err(RsmError::MisalignedOffset)
                    );
                    let too_many: Vec<IoVec> = (0..17)
                        .map(|j| IoVec {
                            offset: base + j,
                            local: &[0xff],
                        })
                        .collect();
                    assert_eq!(i.putv(&too_many), Err(RsmError::BadSgio));
                } else {
                    rng.gen_range(1..1000usize);
                }
            }
            _ => {
                posts += 1;
                if let Some(i) = imp {
                    i.signal_post(SignalFlags::default()).unwrap();
                }
            }
        }
    }
    if let (Some(b), true) = (bar.as_mut(), open) {
        b.close().unwrap();
    }
    (model, posts)
}

#[test]
fn child_importer() {
    let Ok(id) = std::env::var("MYRIX_RSM_RANDOM_ID") else {
        return;
    };
    let c = Controller::get("shm").unwrap();
    let id = SegmentId(u32::from_str_radix(&id, 16).unwrap());
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    let (_, posts) = run(IMPORTERS - 1, Some(&imp));
    eprintln!("child posts {posts}");
}

#[test]
fn many_importers_against_a_model() {
    let c = Controller::get("shm").unwrap();
    let e = c
        .export_create(IMPORTERS * STRIPE, ExportFlags::default())
        .unwrap();
    let id = e.publish(None, &[]).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_importer",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("MYRIX_RSM_RANDOM_ID", format!("{:08x}", id.0))
        .spawn()
        .unwrap();
    let mut posts = 0;
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..IMPORTERS - 1)
            .map(|k| {
                let c = c.clone();
                s.spawn(move || {
                    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
                    run(k, Some(&imp)).1
                })
            })
            .collect();
        // Meanwhile the exporter consumes signals as they come.
        let mut got = 0u32;
        let mut done = false;
        while !done {
            done = hs.iter().all(|h| h.is_finished());
            while e.take_signal().unwrap().is_some() {
                got += 1;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        for h in hs {
            posts += h.join().unwrap();
        }
        assert!(child.wait().unwrap().success(), "the child importer failed");
        while e.take_signal().unwrap().is_some() {
            got += 1;
        }
        let (_, child_posts) = run(IMPORTERS - 1, None);
        assert_eq!(got, posts + child_posts, "every signal arrived once");
    });
    let mem = unsafe { std::slice::from_raw_parts(e.as_ptr(), IMPORTERS * STRIPE) };
    for k in 0..IMPORTERS {
        let (model, _) = run(k, None);
        assert!(
            mem[k * STRIPE..(k + 1) * STRIPE] == model[..],
            "stripe {k} differs from its model"
        );
    }
}
