//! Every collective of `myrix_mpi`'s Rust API checked against a serial reference:
//! each rank's input is a function of its rank, so every rank computes what each
//! collective must give and compares bit for bit (floating-point inputs are small
//! integers, whose sums and products are exact). Runs on the world, on a dup, on
//! the two halves of a split (odd and even ranks, one rank left out with `None`),
//! and on the node's ranks (`split_shared`); sizes from one element to 40 KiB (a
//! line, a slot, several slots, the one-copy way); every predefined operation on
//! `i32`, `u64` and `f64`, and a closure that does not commute (composition of
//! affine maps, which needs rank order). Then the refusals every rank meets alike:
//! a root out of range (`MPI_ERR_ROOT`) and a bitwise operation on `f64`
//! (`MPI_ERR_OP`), after which the communicator still works. Last, dups dropped one
//! after another do not grow the process's mappings (their segments go with them).
//!
//! Every rank prints `coll ok <rank> <checks>`; a wrong value ends the job (exit 4).
//!
//! `myrix mpiexec -n 4 target/debug/examples/coll_check`, alone, or under hydra.

use myrix_mpi::world::{Comm, Error, ErrorClass, Op, World};

/// Rank `r`'s `i`-th element of an input, as a small integer.
fn val(r: u32, i: usize, salt: u64) -> u64 {
    (u64::from(r) * 7 + i as u64 * 3 + salt) % 11 + 1
}

struct Checker {
    checks: usize,
}

impl Checker {
    fn same<T: PartialEq + std::fmt::Debug>(
        &mut self,
        what: &str,
        got: &[T],
        want: &[T],
    ) -> Result<(), String> {
        self.checks += 1;
        if got == want {
            Ok(())
        } else {
            let at = got.iter().zip(want).position(|(a, b)| a != b);
            Err(format!(
                "{what}: got {} values, want {}; first difference at {at:?}",
                got.len(),
                want.len()
            ))
        }
    }
}

fn fold<T: Copy>(xs: impl Iterator<Item = T>, f: impl Fn(T, T) -> T) -> T {
    let mut it = xs;
    let first = it.next().expect("at least one rank");
    it.fold(first, f)
}

/// The predefined operations on integers, serially (`$t` wraps, compares signed or
/// not as it is).
macro_rules! int_op {
    ($name:ident, $t:ty) => {
        fn $name(op: Op, a: $t, b: $t) -> $t {
            match op {
                Op::Sum => a.wrapping_add(b),
                Op::Prod => a.wrapping_mul(b),
                Op::Min => a.min(b),
                Op::Max => a.max(b),
                Op::Band => a & b,
                Op::Bor => a | b,
                Op::Bxor => a ^ b,
                Op::Land => <$t>::from(a != 0 && b != 0),
                Op::Lor => <$t>::from(a != 0 || b != 0),
                Op::Lxor => <$t>::from((a != 0) != (b != 0)),
            }
        }
    };
}
int_op!(int_op, u64);
int_op!(int_op32, i32);

const OPS: [Op; 10] = [
    Op::Sum,
    Op::Prod,
    Op::Min,
    Op::Max,
    Op::Band,
    Op::Bor,
    Op::Bxor,
    Op::Land,
    Op::Lor,
    Op::Lxor,
];

fn reductions(c: &mut Comm, k: &mut Checker, len: usize) -> Result<Result<(), String>, Error> {
    let (me, n) = (c.rank(), c.size());
    for (oi, &op) in OPS.iter().enumerate() {
        let salt = oi as u64;
        let mine: Vec<u64> = (0..len).map(|i| val(me, i, salt)).collect();
        let want: Vec<u64> = (0..len)
            .map(|i| fold((0..n).map(|r| val(r, i, salt)), |a, b| int_op(op, a, b)))
            .collect();
        let mut got = vec![0u64; len];
        c.allreduce(&mine, &mut got, op)?;
        if let Err(e) = k.same(&format!("allreduce u64 {op:?} {len}"), &got, &want) {
            return Ok(Err(e));
        }
        let mine32: Vec<i32> = mine.iter().map(|&x| x as i32 - 6).collect();
        let want32: Vec<i32> = (0..len)
            .map(|i| {
                let xs = (0..n).map(|r| val(r, i, salt) as i32 - 6);
                fold(xs, |a, b| int_op32(op, a, b))
            })
            .collect();
        let root = (oi as u32) % n;
        let mut got32 = vec![0i32; if me == root { len } else { 0 }];
        c.reduce(root, &mine32, &mut got32, op)?;
        if me == root {
            if let Err(e) = k.same(&format!("reduce i32 {op:?} {len}"), &got32, &want32) {
                return Ok(Err(e));
            }
        }
        if matches!(op, Op::Sum | Op::Prod | Op::Min | Op::Max) {
            let minef: Vec<f64> = mine.iter().map(|&x| x as f64).collect();
            let mut gotf = vec![0f64; len];
            c.allreduce(&minef, &mut gotf, op)?;
            let wantf: Vec<f64> = (0..len)
                .map(|i| {
                    let xs = (0..n).map(|r| val(r, i, salt) as f64);
                    fold(xs, |a, b| match op {
                        Op::Sum => a + b,
                        Op::Prod => a * b,
                        Op::Min => a.min(b),
                        _ => a.max(b),
                    })
                })
                .collect();
            if let Err(e) = k.same(&format!("allreduce f64 {op:?} {len}"), &gotf, &wantf) {
                return Ok(Err(e));
            }
        }
    }
    // Composition of affine maps x -> a x + b (mod 2^64): associative, not
    // commutative; input comes from lower ranks, so inout = inout ∘ input.
    let maps: Vec<[u64; 2]> = (0..len)
        .map(|i| [val(me, i, 1) | 1, val(me, i, 2)])
        .collect();
    let compose = |input: &[[u64; 2]], inout: &mut [[u64; 2]]| {
        for (x, y) in input.iter().zip(inout.iter_mut()) {
            // Apply x first, then y: y(x(t)) = ya (xa t + xb) + yb.
            *y = [
                y[0].wrapping_mul(x[0]),
                y[0].wrapping_mul(x[1]).wrapping_add(y[1]),
            ];
        }
    };
    let mut got = vec![[0u64; 2]; len];
    c.allreduce_with(&maps, &mut got, false, compose)?;
    let want: Vec<[u64; 2]> = (0..len)
        .map(|i| {
            let xs = (0..n).map(|r| [val(r, i, 1) | 1, val(r, i, 2)]);
            fold(xs, |x, y| {
                [
                    y[0].wrapping_mul(x[0]),
                    y[0].wrapping_mul(x[1]).wrapping_add(y[1]),
                ]
            })
        })
        .collect();
    if let Err(e) = k.same(&format!("allreduce_with compose {len}"), &got, &want) {
        return Ok(Err(e));
    }
    // Prefix sums.
    let mine: Vec<u64> = (0..len).map(|i| val(me, i, 5)).collect();
    let mut got = vec![0u64; len];
    c.scan(&mine, &mut got, Op::Sum)?;
    let want: Vec<u64> = (0..len)
        .map(|i| (0..=me).map(|r| val(r, i, 5)).sum())
        .collect();
    if let Err(e) = k.same(&format!("scan {len}"), &got, &want) {
        return Ok(Err(e));
    }
    let mut got = vec![0u64; len];
    c.exscan(&mine, &mut got, Op::Sum)?;
    if me > 0 {
        let want: Vec<u64> = (0..len)
            .map(|i| (0..me).map(|r| val(r, i, 5)).sum())
            .collect();
        if let Err(e) = k.same(&format!("exscan {len}"), &got, &want) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
}

fn moves(c: &mut Comm, k: &mut Checker, len: usize) -> Result<Result<(), String>, Error> {
    let (me, n) = (c.rank(), c.size());
    let nn = n as usize;
    let vblock =
        |r: u32, salt: u64, k: usize| -> Vec<u64> { (0..k).map(|i| val(r, i, salt)).collect() };
    let block = |r: u32, salt: u64| vblock(r, salt, len);
    macro_rules! check {
        ($what:expr, $got:expr, $want:expr) => {
            if let Err(e) = k.same(&format!("{} {len}", $what), $got, $want) {
                return Ok(Err(e));
            }
        };
    }
    for root in [0, n - 1] {
        let mut buf = if me == root {
            block(root, 9)
        } else {
            vec![0; len]
        };
        c.bcast(root, &mut buf)?;
        check!("bcast", &buf, &block(root, 9));
        let all: Vec<u64> = (0..n).flat_map(|r| block(r, 3)).collect();
        let mut got = vec![0u64; if me == root { len * nn } else { 0 }];
        c.gather(root, &block(me, 3), &mut got)?;
        if me == root {
            check!("gather", &got, &all);
        }
        let mut mine = vec![0u64; len];
        let send = if me == root { all.clone() } else { Vec::new() };
        c.scatter(root, &send, &mut mine)?;
        check!("scatter", &mine, &block(me, 3));
        // v-forms: rank r has r % 3 + len / 2 elements.
        let counts: Vec<usize> = (0..n).map(|r| r as usize % 3 + len / 2).collect();
        let vall: Vec<u64> = (0..n)
            .flat_map(|r| vblock(r, 4, counts[r as usize]))
            .collect();
        let mine_v = vblock(me, 4, counts[me as usize]);
        let mut got = vec![0u64; if me == root { vall.len() } else { 0 }];
        c.gatherv(root, &mine_v, &mut got, &counts)?;
        if me == root {
            check!("gatherv", &got, &vall);
        }
        let mut back = vec![0u64; counts[me as usize]];
        let send = if me == root { vall.clone() } else { Vec::new() };
        c.scatterv(root, &send, &counts, &mut back)?;
        check!("scatterv", &back, &mine_v);
    }
    let all: Vec<u64> = (0..n).flat_map(|r| block(r, 6)).collect();
    let mut got = vec![0u64; len * nn];
    c.allgather(&block(me, 6), &mut got)?;
    check!("allgather", &got, &all);
    let counts: Vec<usize> = (0..n).map(|r| (r as usize * 5) % 7 + len / 3).collect();
    let vall: Vec<u64> = (0..n)
        .flat_map(|r| vblock(r, 7, counts[r as usize]))
        .collect();
    let mine_v = vblock(me, 7, counts[me as usize]);
    let mut got = vec![0u64; vall.len()];
    c.allgatherv(&mine_v, &mut got, &counts)?;
    check!("allgatherv", &got, &vall);
    // Alltoall: block j of rank i is [i, j, e] encoded.
    let code = |i: u32, j: u32, e: usize| (u64::from(i) << 40) | (u64::from(j) << 20) | e as u64;
    let send: Vec<u64> = (0..n)
        .flat_map(|j| (0..len).map(move |e| code(me, j, e)))
        .collect();
    let want: Vec<u64> = (0..n)
        .flat_map(|i| (0..len).map(move |e| code(i, me, e)))
        .collect();
    let mut got = vec![0u64; len * nn];
    c.alltoall(&send, &mut got)?;
    check!("alltoall", &got, &want);
    // Alltoallv: rank i sends (i + j) % 3 + 1 elements to rank j.
    let cnt = |i: u32, j: u32| ((i + j) % 3 + 1) as usize;
    let scounts: Vec<usize> = (0..n).map(|j| cnt(me, j)).collect();
    let rcounts: Vec<usize> = (0..n).map(|i| cnt(i, me)).collect();
    let send: Vec<u64> = (0..n)
        .flat_map(|j| (0..cnt(me, j)).map(move |e| code(me, j, e)))
        .collect();
    let want: Vec<u64> = (0..n)
        .flat_map(|i| (0..cnt(i, me)).map(move |e| code(i, me, e)))
        .collect();
    let mut got = vec![0u64; want.len()];
    c.alltoallv(&send, &scounts, &mut got, &rcounts)?;
    check!("alltoallv", &got, &want);
    c.barrier()?;
    Ok(Ok(()))
}

fn all_on(c: &mut Comm, k: &mut Checker) -> Result<Result<(), String>, Error> {
    for len in [1, 7, 300, 5000] {
        if let Err(e) = reductions(c, k, len)? {
            return Ok(Err(e));
        }
        if let Err(e) = moves(c, k, len)? {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
}

/// The refusals every rank meets alike; the communicator works afterwards.
fn refusals(c: &mut Comm, k: &mut Checker) -> Result<Result<(), String>, Error> {
    let n = c.size();
    let mut x = [1u64];
    let classes = [
        c.bcast(n, &mut x).err().map(|e| e.class()),
        c.reduce(n + 3, &[1u64], &mut [0u64], Op::Sum)
            .err()
            .map(|e| e.class()),
        c.allreduce(&[1.0f64], &mut [0.0], Op::Band)
            .err()
            .map(|e| e.class()),
        c.gather(n, &[1u8], &mut []).err().map(|e| e.class()),
    ];
    let want = [
        Some(ErrorClass::Root),
        Some(ErrorClass::Root),
        Some(ErrorClass::Op),
        Some(ErrorClass::Root),
    ];
    if let Err(e) = k.same("refusals", &classes, &want) {
        return Ok(Err(e));
    }
    let got = c.allreduce_one(1u32, Op::Sum)?;
    if let Err(e) = k.same("after the refusals", &[got], &[n]) {
        return Ok(Err(e));
    }
    Ok(Ok(()))
}

/// Mappings of this process: lines of `/proc/self/maps`.
fn mappings() -> usize {
    std::fs::read_to_string("/proc/self/maps").map_or(0, |t| t.lines().count())
}

/// Dropped communicators give their segments back: many dups, each set up by a
/// collective (its segment mapped), leave no more mappings behind than one does.
fn dups_free_their_segments(w: &Comm, k: &mut Checker) -> Result<Result<(), String>, Error> {
    const DUPS: usize = 48;
    let n = w.size();
    let mut sums = Vec::with_capacity(DUPS + 1);
    sums.push(w.dup()?.allreduce_one(1u32, Op::Sum)?);
    let before = mappings();
    for _ in 0..DUPS {
        sums.push(w.dup()?.allreduce_one(1u32, Op::Sum)?);
    }
    let after = mappings();
    if let Err(e) = k.same("sums on the dups", &sums, &[n; DUPS + 1]) {
        return Ok(Err(e));
    }
    k.checks += 1;
    // Slack for what else the process maps meanwhile (a thread's stack, an arena);
    // one kept segment per dup is at least DUPS more.
    if after > before + DUPS / 4 {
        return Ok(Err(format!(
            "{DUPS} dups dropped grew this process's mappings from {before} to {after}"
        )));
    }
    Ok(Ok(()))
}

fn run(w: &mut World) -> Result<Result<usize, String>, Error> {
    let mut k = Checker { checks: 0 };
    let me = w.rank();
    macro_rules! step {
        ($e:expr) => {
            if let Err(e) = $e? {
                return Ok(Err(e));
            }
        };
    }
    step!(all_on(w, &mut k));
    step!(refusals(w, &mut k));
    let mut d = w.dup()?;
    step!(all_on(&mut d, &mut k));
    // Odd and even ranks, highest first; the last rank of an odd-sized world out.
    let left_out = w.size() > 2 && w.size() % 2 == 1 && me == w.size() - 1;
    let color = (!left_out).then_some(me % 2);
    let half = w.split(color, -(me as i32))?;
    match (half, left_out) {
        (Some(mut h), false) => {
            let want: Vec<u32> = (0..w.size())
                .filter(|&r| {
                    r % 2 == me % 2 && !(w.size() > 2 && w.size() % 2 == 1 && r == w.size() - 1)
                })
                .rev()
                .collect();
            let mut got = vec![0u32; h.size() as usize];
            h.allgather(&[me], &mut got)?;
            if let Err(e) = k.same("split order", &got, &want) {
                return Ok(Err(e));
            }
            step!(all_on(&mut h, &mut k));
        }
        (None, true) => {}
        (got, _) => return Ok(Err(format!("split: rank {me} got {got:?}"))),
    }
    let mut node = w.split_shared(0)?;
    step!(moves(&mut node, &mut k, 33));
    drop(d);
    // A dup after the drops reuses their context ids and still agrees.
    let mut again = w.dup()?;
    step!(reductions(&mut again, &mut k, 3));
    step!(dups_free_their_segments(w, &mut k));
    Ok(Ok(k.checks))
}

fn main() {
    let mut world = match World::init() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("coll_check: {e}");
            std::process::exit(3);
        }
    };
    let me = world.rank();
    match run(&mut world) {
        Ok(Ok(checks)) => {
            if let Err(e) = world.finalize() {
                eprintln!("coll_check: rank {me}: finalize: {e}");
                std::process::exit(6);
            }
            println!("coll ok {me} {checks}");
        }
        Ok(Err(bad)) => {
            eprintln!("coll_check: rank {me}: {bad}");
            world.abort(4, &bad);
        }
        Err(e) => {
            eprintln!("coll_check: rank {me}: {e} ({})", e.class());
            world.abort(5, &e.to_string());
        }
    }
}
