//! One schedule constructor per collective, over regions already declared in the
//! [`Builder`] (the C layer declares the caller's memory or its own packed copies).
//! Lengths, counts and displacements are bytes; ranks are the communicator's.
//! In place: pass the same region as input and output (copies between identical
//! places are dropped).
//!
//! Each constructor checks its arguments and records steps; any mistake (a block
//! outside its region, counts for the wrong number of ranks) shows in
//! [`Builder::build`]'s error, before anything is sent. Fences separate a step
//! from every request that touches the same memory.

use super::sched::{Buf, Builder};
use crate::coll::CollError;

fn check_root(b: &Builder, root: usize) -> Result<(), CollError> {
    if root < b.size() {
        Ok(())
    } else {
        Err(CollError::Root {
            root,
            size: b.size(),
        })
    }
}

/// Dissemination: in round k every rank signals `rank + 2^k` and hears from
/// `rank - 2^k`.
pub fn barrier(b: &mut Builder) {
    let (me, n) = (b.rank(), b.size());
    let none = b.scratch(0);
    let mut k = 1;
    while k < n {
        b.send((me + k) % n, none, 0, 0);
        b.recv((me + n - k) % n, none, 0, 0);
        b.fence();
        k <<= 1;
    }
}

/// Binomial tree from `root` over all of region `buf`.
pub fn bcast(b: &mut Builder, root: usize, buf: Buf) -> Result<(), CollError> {
    check_root(b, root)?;
    let (me, n) = (b.rank(), b.size());
    let len = b.len_of(buf);
    let vr = (me + n - root) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            b.recv((vr - mask + root) % n, buf, 0, len);
            b.fence();
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            b.send((vr + mask + root) % n, buf, 0, len);
        }
        mask >>= 1;
    }
    b.fence();
    Ok(())
}

/// Reduces `acc` (every rank's, `len` bytes) into `root`'s `acc` over a binomial
/// tree: rooted at `root` for a commutative op, else at rank 0 in rank order (every
/// node combines `[lo, mid) op [mid, hi)`), rank 0 then handing the result to
/// `root`. Elsewhere `acc` ends unspecified.
fn reduce_acc(b: &mut Builder, root: usize, acc: Buf, len: usize, commutative: bool) {
    let (me, n) = (b.rank(), b.size());
    let tree_root = if commutative { root } else { 0 };
    let tmp = b.scratch(len);
    let vr = (me + n - tree_root) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask == 0 {
            let child = vr | mask;
            if child < n {
                b.recv((child + tree_root) % n, tmp, 0, len);
                b.fence();
                if commutative {
                    b.reduce(tmp, 0, acc, 0, len);
                } else {
                    b.reduce_right(acc, tmp, len);
                }
            }
        } else {
            b.send((vr - mask + tree_root) % n, acc, 0, len);
            b.fence();
            break;
        }
        mask <<= 1;
    }
    if tree_root != root {
        if me == tree_root {
            b.send(root, acc, 0, len);
        } else if me == root {
            b.recv(tree_root, acc, 0, len);
        }
        b.fence();
    }
}

/// MPI_Reduce: `send` of every rank (`len` bytes) into `recv` at `root` (`recv`
/// is ignored elsewhere; in place: `recv == send` at the root).
pub fn reduce(
    b: &mut Builder,
    root: usize,
    send: Buf,
    recv: Buf,
    len: usize,
    commutative: bool,
) -> Result<(), CollError> {
    check_root(b, root)?;
    let acc = if b.rank() == root {
        recv
    } else {
        b.scratch(len)
    };
    b.copy(send, 0, acc, 0, len);
    reduce_acc(b, root, acc, len, commutative);
    Ok(())
}

/// MPI_Allreduce by recursive doubling (the ranks beyond the largest power of two
/// first fold into a neighbour); partners combine lower ranks op higher ranks, so
/// every rank computes the same bits and non-commutative ops stay in rank order.
pub fn allreduce(b: &mut Builder, send: Buf, recv: Buf, len: usize) {
    let (me, n) = (b.rank(), b.size());
    b.copy(send, 0, recv, 0, len);
    let tmp = b.scratch(len);
    let mut p2 = 1;
    while p2 * 2 <= n {
        p2 *= 2;
    }
    let rem = n - p2;
    let newrank = if me < 2 * rem {
        if me % 2 == 0 {
            b.send(me + 1, recv, 0, len);
            b.fence();
            None
        } else {
            b.recv(me - 1, tmp, 0, len);
            b.fence();
            b.reduce(tmp, 0, recv, 0, len);
            Some(me / 2)
        }
    } else {
        Some(me - rem)
    };
    if let Some(nr) = newrank {
        let mut mask = 1;
        while mask < p2 {
            let pnr = nr ^ mask;
            let partner = if pnr < rem { pnr * 2 + 1 } else { pnr + rem };
            b.send(partner, recv, 0, len);
            b.recv(partner, tmp, 0, len);
            b.fence();
            if pnr < nr {
                b.reduce(tmp, 0, recv, 0, len);
            } else {
                b.reduce_right(recv, tmp, len);
            }
            mask <<= 1;
        }
    }
    if me < 2 * rem {
        if me % 2 == 1 {
            b.send(me - 1, recv, 0, len);
        } else {
            b.recv(me + 1, recv, 0, len);
        }
        b.fence();
    }
}

/// MPI_Gatherv, linear: rank `i`'s `send` lands in the root's `recv[i]`. `send`
/// None at the root: in place (its block is already there). `recv` matters at the
/// root only.
pub fn gatherv(
    b: &mut Builder,
    root: usize,
    send: Option<Block>,
    recv: &[Block],
) -> Result<(), CollError> {
    check_root(b, root)?;
    let me = b.rank();
    if me != root {
        let s = send.ok_or_else(|| CollError::Args("gatherv: no send buffer".into()))?;
        b.send(root, s.buf, s.off, s.len);
        b.fence();
        return Ok(());
    }
    check_blocks("gatherv", b, recv)?;
    for (i, r) in recv.iter().enumerate() {
        if i != me {
            b.recv(i, r.buf, r.off, r.len);
        }
    }
    if let Some(s) = send {
        same_len(me, recv[me], s)?;
        b.copy(s.buf, s.off, recv[me].buf, recv[me].off, s.len);
    }
    b.fence();
    Ok(())
}

/// MPI_Scatterv, linear: rank `i` receives the root's `send[i]` into `recv`.
/// `recv` None at the root: in place.
pub fn scatterv(
    b: &mut Builder,
    root: usize,
    send: &[Block],
    recv: Option<Block>,
) -> Result<(), CollError> {
    check_root(b, root)?;
    let me = b.rank();
    if me != root {
        let r = recv.ok_or_else(|| CollError::Args("scatterv: no receive buffer".into()))?;
        b.recv(root, r.buf, r.off, r.len);
        b.fence();
        return Ok(());
    }
    check_blocks("scatterv", b, send)?;
    for (i, s) in send.iter().enumerate() {
        if i != me {
            b.send(i, s.buf, s.off, s.len);
        }
    }
    if let Some(r) = recv {
        same_len(me, r, send[me])?;
        b.copy(send[me].buf, send[me].off, r.buf, r.off, r.len);
    }
    b.fence();
    Ok(())
}

/// MPI_Allgatherv over a ring: n - 1 steps, each passing on the block received
/// last. `send` None: in place (this rank's block is already in `recv`).
pub fn allgatherv(b: &mut Builder, send: Option<Block>, recv: &[Block]) -> Result<(), CollError> {
    check_blocks("allgatherv", b, recv)?;
    let (me, n) = (b.rank(), b.size());
    if let Some(s) = send {
        same_len(me, recv[me], s)?;
        b.copy(s.buf, s.off, recv[me].buf, recv[me].off, s.len);
    }
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    for step in 0..n.saturating_sub(1) {
        let sb = recv[(me + n - step) % n];
        let rb = recv[(me + n - step - 1) % n];
        b.send(right, sb.buf, sb.off, sb.len);
        b.recv(left, rb.buf, rb.off, rb.len);
        b.fence();
    }
    Ok(())
}

fn check_blocks(what: &str, b: &Builder, blocks: &[Block]) -> Result<(), CollError> {
    if blocks.len() != b.size() {
        return Err(CollError::Args(format!(
            "{what}: {} blocks for {} ranks",
            blocks.len(),
            b.size()
        )));
    }
    Ok(())
}

/// This rank's own block must be as long on both sides.
fn same_len(me: usize, want: Block, got: Block) -> Result<(), CollError> {
    if want.len == got.len {
        Ok(())
    } else {
        Err(CollError::Length {
            from: me,
            expected: want.len,
            got: got.len,
        })
    }
}

/// One block of an all-to-all: `len` bytes at `off` of a region.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    pub buf: Buf,
    pub off: usize,
    pub len: usize,
}

/// MPI_Alltoall(v/w): `send[j]` goes to rank `j`, which stores it in its `recv[i]`
/// (`i` the sender). Every exchange starts at once (one fence).
pub fn alltoallv(b: &mut Builder, send: &[Block], recv: &[Block]) -> Result<(), CollError> {
    let (me, n) = (b.rank(), b.size());
    if send.len() != n || recv.len() != n {
        return Err(CollError::Args(format!(
            "alltoallv: {} send and {} receive blocks for {n} ranks",
            send.len(),
            recv.len()
        )));
    }
    if send[me].len != recv[me].len {
        return Err(CollError::Length {
            from: me,
            expected: recv[me].len,
            got: send[me].len,
        });
    }
    for i in 1..n {
        let src = (me + n - i) % n;
        let r = recv[src];
        b.recv(src, r.buf, r.off, r.len);
    }
    for i in 1..n {
        let dst = (me + i) % n;
        let s = send[dst];
        b.send(dst, s.buf, s.off, s.len);
    }
    let (s, r) = (send[me], recv[me]);
    b.copy(s.buf, s.off, r.buf, r.off, s.len);
    b.fence();
    Ok(())
}

/// MPI_Reduce_scatter: every rank's `send` (the blocks of `counts` end to end) is
/// reduced at rank 0, whose result's block `i` then goes to rank `i`'s `recv`.
pub fn reduce_scatter(
    b: &mut Builder,
    send: Buf,
    recv: Buf,
    counts: &[usize],
    commutative: bool,
) -> Result<(), CollError> {
    let (me, n) = (b.rank(), b.size());
    if counts.len() != n {
        return Err(CollError::Args(format!(
            "reduce_scatter: {} counts for {n} ranks",
            counts.len()
        )));
    }
    let (displs, total) = crate::coll::packed_displs(counts)?;
    let acc = b.scratch(total);
    b.copy(send, 0, acc, 0, total);
    reduce_acc(b, 0, acc, total, commutative);
    let blocks: Vec<Block> = (0..n)
        .map(|i| Block {
            buf: acc,
            off: displs[i],
            len: counts[i],
        })
        .collect();
    let mine = Block {
        buf: recv,
        off: 0,
        len: counts[me],
    };
    scatterv(b, 0, &blocks, Some(mine))
}

/// MPI_Scan (`exclusive` false) and MPI_Exscan by recursive doubling: in round k a
/// rank exchanges its partial result with the rank differing in bit k; lower
/// blocks go on the left. Exscan leaves rank 0's `recv` as it was.
pub fn scan(b: &mut Builder, send: Buf, recv: Buf, len: usize, exclusive: bool) {
    let (me, n) = (b.rank(), b.size());
    let partial = b.scratch(len);
    let tmp = b.scratch(len);
    // In place, `send` is `recv`: read it before anything lands there.
    b.copy(send, 0, partial, 0, len);
    let mut have = !exclusive;
    if have {
        b.copy(send, 0, recv, 0, len);
    }
    let mut mask = 1;
    while mask < n {
        let partner = me ^ mask;
        if partner < n {
            b.send(partner, partial, 0, len);
            b.recv(partner, tmp, 0, len);
            b.fence();
            if partner < me {
                if have {
                    b.reduce(tmp, 0, recv, 0, len);
                } else {
                    b.copy(tmp, 0, recv, 0, len);
                    have = true;
                }
                b.reduce(tmp, 0, partial, 0, len);
            } else {
                b.reduce_right(partial, tmp, len);
            }
        }
        mask <<= 1;
    }
}
