//! Collective latency from Rust, measured as `bench/mpi/coll.c` measures it from C
//! (so `bench/rust_coll.sh` sets the two side by side): per test and size, `-r`
//! timed repetitions of `-i` calls each after an untimed warm-up of a tenth, each
//! repetition the slowest rank's mean per call (an allreduce with `Op::Max`), and
//! the median printed by rank 0 as `test bytes latency_us iterations`.
//!
//! Tests: `allreduce` (f64, `Op::Sum`), `bcast` (bytes, root 0), `reduce` (f64,
//! `Op::Sum`, root 0), `allgather` (bytes, the size split among the ranks),
//! `barrier`. `-d` runs them on a dup of the world.
//!
//! `myrix mpiexec -n 2 target/release/examples/coll_bench -t allreduce,bcast -s 8 -i 20000 -r 5`

use myrix_mpi::world::{Comm, Error, Op, World};
use std::time::Instant;

struct Args {
    tests: Vec<String>,
    sizes: Vec<usize>,
    iters: usize,
    reps: usize,
    dup: bool,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        tests: vec!["allreduce".into(), "bcast".into()],
        sizes: vec![8],
        iters: 2000,
        reps: 5,
        dup: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        if k == "-d" {
            a.dup = true;
            continue;
        }
        let v = it.next().ok_or(format!("{k} needs a value"))?;
        let num = |s: &str| {
            s.parse::<usize>()
                .map_err(|_| format!("{k} {s}: not a number"))
        };
        match k.as_str() {
            "-t" => a.tests = v.split(',').map(String::from).collect(),
            "-s" => a.sizes = v.split(',').map(num).collect::<Result<_, _>>()?,
            "-i" => a.iters = num(&v)?.max(1),
            "-r" => a.reps = num(&v)?.max(1),
            _ => return Err(format!("unknown option {k}")),
        }
    }
    Ok(a)
}

/// One call of `test` on `size` bytes.
fn once(
    c: &mut Comm,
    test: &str,
    s: &mut [f64],
    r: &mut [f64],
    b: &mut [u8],
    g: &mut [u8],
) -> Result<(), Error> {
    match test {
        "allreduce" => c.allreduce(s, r, Op::Sum),
        "reduce" => c.reduce(0, s, r, Op::Sum),
        "bcast" => c.bcast(0, b),
        "allgather" => c.allgather(&b[..g.len() / c.size() as usize], g),
        _ => c.barrier(),
    }
}

fn main() {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("coll_bench: {e}");
            std::process::exit(2);
        }
    };
    let mut world = match World::init() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("coll_bench: {e}");
            std::process::exit(3);
        }
    };
    if let Err(e) = run(&mut world, &args) {
        eprintln!("coll_bench: rank {}: {e}", world.rank());
        world.abort(5, &e.to_string());
    }
}

fn run(world: &mut World, a: &Args) -> Result<(), Error> {
    let mut dup = if a.dup { Some(world.dup()?) } else { None };
    let n = world.size() as usize;
    if world.rank() == 0 {
        println!(
            "# coll_bench (Rust API): {n} ranks{}, median of {} repetitions, slowest rank's mean per call",
            if a.dup { " on a dup of the world" } else { "" },
            a.reps
        );
        println!("# test bytes latency_us iterations");
    }
    for test in &a.tests {
        let sizes = if test == "barrier" {
            vec![0]
        } else {
            a.sizes.clone()
        };
        for &size in &sizes {
            let size = match test.as_str() {
                "allreduce" | "reduce" => size / 8 * 8,
                "allgather" => size / n * n,
                _ => size,
            };
            let it = if size <= 4096 {
                a.iters
            } else {
                (a.iters * 4096 / size).max(20)
            };
            let (mut s, mut r) = (vec![1.0f64; size / 8], vec![0.0f64; size / 8]);
            let (mut b, mut g) = (vec![0u8; size], vec![0u8; size]);
            let mut times = Vec::with_capacity(a.reps);
            let c: &mut Comm = match &mut dup {
                Some(d) => d,
                None => world,
            };
            for _ in 0..it / 10 + 1 {
                once(c, test, &mut s, &mut r, &mut b, &mut g)?;
            }
            if test == "allreduce" && r.iter().any(|&x| x != n as f64) {
                eprintln!("coll_bench: wrong allreduce result");
                std::process::exit(4);
            }
            for _ in 0..a.reps {
                world.barrier()?;
                let c: &mut Comm = match &mut dup {
                    Some(d) => d,
                    None => world,
                };
                let t0 = Instant::now();
                for _ in 0..it {
                    once(c, test, &mut s, &mut r, &mut b, &mut g)?;
                }
                let us = t0.elapsed().as_secs_f64() * 1e6 / it as f64;
                times.push(world.allreduce_one(us, Op::Max)?);
            }
            times.sort_by(f64::total_cmp);
            if world.rank() == 0 {
                println!("{test} {size} {:.3} {it}", times[a.reps / 2]);
            }
        }
    }
    drop(dup);
    Ok(())
}
