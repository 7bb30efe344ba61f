//! 8b/10b throughput in data bytes per second, `cargo bench -p myrix-link --bench codec`.
//!
//! The bulk paths (`encode_slice`, `decode_slice`) are compared in the same run with the
//! one-code-group-at-a-time API they must agree with, so the ratio survives a noisy host.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use myrix_link::code::{decode, decode_slice, encode_data, encode_slice, CodeGroup, Rd};

fn data(n: usize) -> Vec<u8> {
    let mut x: u32 = 0x1234_5678;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

fn codec(c: &mut Criterion) {
    const N: usize = 64 * 1024;
    let bytes = data(N);
    let mut cgs = vec![CodeGroup::default(); N];
    encode_slice(&bytes, &mut cgs, Rd::Neg);
    let mut out = vec![0u8; N];

    let mut g = c.benchmark_group("8b10b");
    g.throughput(Throughput::Bytes(N as u64));
    g.bench_function("encode_slice", |b| {
        b.iter(|| encode_slice(black_box(&bytes), black_box(&mut cgs), Rd::Neg))
    });
    g.bench_function("encode_one_by_one", |b| {
        b.iter(|| {
            let mut rd = Rd::Neg;
            for (d, o) in bytes.iter().zip(cgs.iter_mut()) {
                let (cg, n) = encode_data(*d, rd);
                *o = cg;
                rd = n;
            }
            black_box(rd)
        })
    });
    g.bench_function("decode_slice", |b| {
        b.iter(|| decode_slice(black_box(&cgs), black_box(&mut out), Rd::Neg).unwrap())
    });
    g.bench_function("decode_one_by_one", |b| {
        b.iter(|| {
            let mut rd = Rd::Neg;
            for (cg, o) in cgs.iter().zip(out.iter_mut()) {
                let (r, n) = decode(*cg, rd);
                if let Ok(myrix_link::code::Octet::D(d)) = r {
                    *o = d;
                }
                rd = n;
            }
            black_box(rd)
        })
    });
    g.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
