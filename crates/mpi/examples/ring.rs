//! MPI from Rust through `myrix_mpi::World`, between processes: a token passed round
//! the ranks and checked, a nonblocking exchange of `f64` slices with both
//! neighbours, a message of a length the receiver learns by probing, a barrier, and a
//! ping-pong timing loop between ranks 0 and 1. Every rank prints `ring ok <rank>`;
//! rank 0 also prints the ring's line (with the number of nodes) and, with two ranks or more, one timing line:
//! `pingpong 8 B: <t> us one way (<n> round trips)`.
//!
//! `myrix mpiexec -n 4 target/debug/examples/ring [round trips]`, `mpiexec.hydra -n 2 …`,
//! `srun --mpi=pmi2 -n 2 …`, or alone.

use myrix_mpi::world::{Error, World, ANY_SOURCE, ANY_TAG};
use std::time::Instant;

const TOKEN: i32 = 1;
const HALO: i32 = 2;
const PROBED: i32 = 3;
const PING: i32 = 4;

fn main() {
    let trips = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000u32);
    let mut world = match World::init() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("ring: {e}");
            std::process::exit(3);
        }
    };
    match run(&mut world, trips) {
        Ok(Ok(())) => {}
        Ok(Err(bad)) => {
            eprintln!("ring: rank {}: {bad}", world.rank());
            world.abort(4, &bad);
        }
        Err(e) => {
            eprintln!("ring: rank {}: {e}", world.rank());
            world.abort(5, &e.to_string());
        }
    }
    let me = world.rank();
    match world.finalize() {
        Ok(()) => println!("ring ok {me}"),
        Err(e) => {
            eprintln!("ring: rank {me}: finalize: {e}");
            std::process::exit(6);
        }
    }
}

/// `Err`: MPI failed; `Ok(Err(what))`: a wrong value arrived.
fn run(w: &mut World, trips: u32) -> Result<Result<(), String>, Error> {
    let (me, n) = (w.rank(), w.size());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);

    // 1. The token: [sum of (rank + 1) so far, hops], round from rank 0 and back.
    if me == 0 {
        let mut back = [0u64; 2];
        let start = [1u64, 1];
        w.scope(|s| {
            // Posted before the send: alone, rank 0 is its own left neighbour.
            let r = s.irecv_pod(Some(left), Some(TOKEN), &mut back)?;
            s.isend_pod(right, TOKEN, &start).and_then(|q| s.wait(q))?;
            s.wait(r)
        })??;
        let want = [u64::from(n) * u64::from(n + 1) / 2, u64::from(n)];
        if back != want {
            return Ok(Err(format!("token came back {back:?}, want {want:?}")));
        }
        let nodes = w.job().nnodes;
        println!("ring: the token went round {n} ranks on {nodes} node(s): {back:?}");
    } else {
        let mut t = [0u64; 2];
        let (got, st) = w.recv_pod(Some(left), Some(TOKEN), &mut t)?;
        if got != 2 || st.source != left {
            return Ok(Err(format!("token of {got} elements from {}", st.source)));
        }
        t[0] += u64::from(me) + 1;
        t[1] += 1;
        w.send_pod(right, TOKEN, &t)?;
    }

    // 2. Both neighbours at once, nonblocking, on borrowed slices: 1000 f64 each way.
    let mine: Vec<f64> = (0..1000)
        .map(|i| f64::from(me) * 1e4 + f64::from(i))
        .collect();
    let (mut from_left, mut from_right) = (vec![0f64; 1000], vec![0f64; 1000]);
    w.scope(|s| {
        let rl = s.irecv_pod(Some(left), Some(HALO), &mut from_left)?;
        let rr = s.irecv_pod(Some(right), Some(HALO + 1), &mut from_right)?;
        let sr = s.isend_pod(right, HALO, &mine)?;
        let sl = s.isend_pod(left, HALO + 1, &mine)?;
        s.wait_all([rl, rr, sr, sl]).map(drop)
    })??;
    for (got, from) in [(&from_left, left), (&from_right, right)] {
        let ok = got
            .iter()
            .enumerate()
            .all(|(i, &x)| x == f64::from(from) * 1e4 + i as f64);
        if !ok {
            return Ok(Err(format!("bad halo from rank {from}")));
        }
    }

    // 3. A message whose length the receiver does not know: 100 * (rank + 1) bytes of
    // the sender's rank, sent from an owned vector, received by a matched probe.
    let len = 100 * (me as usize + 1);
    let send = w.isend_vec(right, PROBED, vec![me as u8; len])?;
    let (data, st) = w.recv_vec::<u8>(ANY_SOURCE, Some(PROBED))?;
    let want = 100 * (left as usize + 1);
    if st.source != left || data.len() != want || data.iter().any(|&b| b != left as u8) {
        return Ok(Err(format!(
            "probed message of {} bytes from {}",
            data.len(),
            st.source
        )));
    }
    let (_, back) = w.wait_vec(send)?;
    if back.len() != len {
        return Ok(Err("the sent vector came back changed".into()));
    }

    w.barrier()?;

    // 4. Ping-pong between ranks 0 and 1: 8 bytes, `trips` round trips timed.
    if n >= 2 && me < 2 {
        let other = 1 - me;
        let mut buf = [0u8; 8];
        let mut once = |w: &mut World, i: u64| -> Result<bool, Error> {
            if me == 0 {
                w.send(other, PING, &i.to_le_bytes())?;
                w.recv(Some(other), Some(PING), &mut buf)?;
            } else {
                w.recv(Some(other), ANY_TAG, &mut buf)?;
                w.send(other, PING, &buf)?;
            }
            Ok(u64::from_le_bytes(buf) == i)
        };
        for i in 0..100 {
            if !once(w, i)? {
                return Ok(Err(format!("ping-pong: round {i} came back wrong")));
            }
        }
        let t = Instant::now();
        for i in 0..u64::from(trips) {
            if !once(w, i)? {
                return Ok(Err(format!("ping-pong: round {i} came back wrong")));
            }
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / f64::from(trips.max(1)) / 2.0;
        if me == 0 {
            println!("pingpong 8 B: {us:.3} us one way ({trips} round trips)");
        }
    }
    Ok(Ok(()))
}
