//! MPI_Gatherv, MPI_Scatterv and MPI_Alltoallv through the communicator's shared
//! segment (`coll::shm`), whose protocol needs every rank to take the same steps.
//!
//! The first step carries the sizes in a line (a *head*, [`INLINE`] bytes): Gatherv
//! each rank's byte count, Scatterv the root's counts, Alltoallv each rank's largest
//! block and total; **small blocks ride in the same head** after the sizes, so a
//! call of small blocks is one step, as the regular forms are. Whether they did is
//! decided from what the heads say, so every rank decides alike. Larger blocks then
//! move padded to the largest with the regular gather, scatter or alltoall. The
//! padding costs nothing when the counts are alike (the usual case) and is refused
//! when it would more than double the bytes moved (plus [`SLACK`]): the
//! point-to-point algorithms then, chosen alike on every rank since every rank
//! knows the same sizes. A rank whose counts disagree with the others' (an
//! erroneous program) still takes every step, then returns MPI_ERR_TRUNCATE.
//!
//! Blocks are named by a function from a rank to (offset, bytes) in a byte buffer,
//! so callers with a contiguous predefined type pass the user's buffer itself.

use super::args::run;
use super::shm::{self, Via, Which};
use crate::abi::*;
use crate::comm::CommRef;
use myrix_mpi::coll::shm::{ShmColl, INLINE};
use std::os::raw::c_int;

/// Padding allowed beyond twice the bytes moved.
const SLACK: usize = 64 * 1024;

/// The largest padded Alltoallv staging buffers kept between calls (each).
const KEEP: usize = 64 << 20;

thread_local! {
    /// Alltoallv's two padded staging buffers, kept between calls up to [`KEEP`]:
    /// fresh ones cost a page fault per 4 KiB on every call (NAS IS moves 32 MiB per
    /// call, a third of its time in faults before).
    static STAGE: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = const {
        std::cell::RefCell::new((Vec::new(), Vec::new()))
    };
}

/// Where rank `q`'s block lies in a byte buffer: (offset, bytes).
pub(super) type Blocks<'a> = &'a dyn Fn(usize) -> (usize, usize);

/// Heads of up to this many ranks live on the stack.
const STACK_RANKS: usize = 8;

/// A zeroed scratch buffer of `len` bytes, on the stack when small.
struct Scratch {
    stack: [u8; STACK_RANKS * INLINE],
    heap: Vec<u8>,
    len: usize,
}

impl Scratch {
    fn new(len: usize) -> Scratch {
        Scratch {
            stack: [0; STACK_RANKS * INLINE],
            heap: if len > STACK_RANKS * INLINE {
                vec![0; len]
            } else {
                Vec::new()
            },
            len,
        }
    }
    fn buf(&mut self) -> &mut [u8] {
        if self.len > STACK_RANKS * INLINE {
            &mut self.heap
        } else {
            &mut self.stack[..self.len]
        }
    }
}

fn u64_at(v: &[u8], at: usize) -> usize {
    v.get(at..at + 8)
        .and_then(|x| x.try_into().ok())
        .map_or(0, |x| u64::from_le_bytes(x) as usize)
}

fn u32_at(v: &[u8], at: usize) -> usize {
    v.get(at..at + 4)
        .and_then(|x| x.try_into().ok())
        .map_or(0, |x| u32::from_le_bytes(x) as usize)
}

fn worth(padded: Option<usize>, moved: usize) -> bool {
    padded.is_some_and(|p| p <= moved.saturating_mul(2).saturating_add(SLACK))
}

/// Bytes of a block that ride in a Gatherv head, beside the count.
const CARRY: usize = INLINE - 8;

/// Gatherv of packed `data` (this rank's block) to `root`, whose `out` holds the
/// blocks `at(q)` (`root_side` at the root only); `None`: not through the segment
/// (the caller then runs the point-to-point algorithm).
pub(super) fn gatherv(
    c: Via,
    name: &str,
    root: usize,
    data: &[u8],
    root_side: Option<(Blocks, &mut [u8])>,
) -> Option<Result<(), c_int>> {
    let s = c.get(Which::Gather, 0)?;
    let mut g = shm::lock(&s);
    if g.size() <= 2 {
        return gatherv_pair(&mut g, name, root, data, root_side);
    }
    let (n, me) = (g.size(), g.rank());
    // Head: the count, then the block when it fits.
    let mut head = [0u8; INLINE];
    head[..8].copy_from_slice(&(data.len() as u64).to_le_bytes());
    if data.len() <= CARRY {
        head[8..8 + data.len()].copy_from_slice(data);
    }
    let mut heads = Scratch::new(INLINE * n);
    let hs = heads.buf();
    // The root's own block never moves. With two ranks the one block that does is
    // the other rank's, whose size it knows: a gather (that rank need not wait for
    // the root). With more, each rank must know every other's size to choose alike.
    let r = if n == 2 {
        g.gather(root, &head, if me == root { hs } else { &mut [] })
    } else {
        g.allgather(&head, hs)
    };
    if let Err(e) = run(name, r) {
        return Some(Err(e));
    }
    let count = |q: usize| {
        if q == me {
            data.len()
        } else {
            u64_at(hs, q * INLINE)
        }
    };
    let movers = || (0..n).filter(|&q| q != root);
    let m = movers().map(count).max().unwrap_or(0);
    let inline = m <= CARRY;
    let mut all = Vec::new();
    if !inline && g.one_copy(m) {
        // Large blocks: written straight into the root's buffer (`coll::shm`'s
        // one-copy way); only the root's own block is left to copy here.
        let mut root_side = root_side;
        let side = root_side.as_mut().map(|(at, out)| (*at, &mut **out));
        if let Err(e) = run(name, g.gatherv_direct(root, data, side)) {
            return Some(Err(e));
        }
        let Some((at, out)) = root_side else {
            return Some(Ok(()));
        };
        let (o, b) = at(root);
        let k = b.min(data.len());
        out[o..o + k].copy_from_slice(&data[..k]);
        let bad = (0..n).any(|q| at(q).1 != count(q));
        return Some(if bad { Err(MPI_ERR_TRUNCATE) } else { Ok(()) });
    }
    if !inline {
        if !worth(m.checked_mul(n - 1), movers().map(count).sum()) {
            return None;
        }
        let mut block = data.to_vec();
        block.resize(m, 0);
        if root_side.is_some() {
            all = vec![0u8; m * n];
        }
        if let Err(e) = run(name, g.gather(root, &block, &mut all)) {
            return Some(Err(e));
        }
    }
    let Some((at, out)) = root_side else {
        return Some(Ok(()));
    };
    let mut bad = false;
    for q in 0..n {
        let (o, b) = at(q);
        let (from, k) = if q == root {
            (data, b.min(data.len()))
        } else if inline {
            (&hs[q * INLINE + 8..(q + 1) * INLINE], b.min(count(q)))
        } else {
            (&all[q * m..(q + 1) * m], b.min(count(q)))
        };
        bad |= b != count(q);
        out[o..o + k].copy_from_slice(&from[..k]);
    }
    Some(if bad { Err(MPI_ERR_TRUNCATE) } else { Ok(()) })
}

/// [`gatherv`] on one or two ranks: the one block that may move is the non-root's,
/// whose size that rank knows, so its head alone tells both ranks what follows. It
/// is written straight into the rank's line and read there by the root
/// (`ShmColl::gather_line`): no staging buffer, one copy of a small block into the
/// root's buffer (the 8-byte call was 1.3× the faster peer's time with the heads
/// staged, session 25).
fn gatherv_pair(
    g: &mut ShmColl,
    name: &str,
    root: usize,
    data: &[u8],
    mut root_side: Option<(Blocks, &mut [u8])>,
) -> Option<Result<(), c_int>> {
    let n = g.size();
    let mut bad = false;
    if let Some((at, out)) = &mut root_side {
        // The root's own block never moves.
        let (o, b) = at(root);
        let k = b.min(data.len());
        out[o..o + k].copy_from_slice(&data[..k]);
        bad |= b != data.len();
    }
    // The mover's bytes (at the root: from its head).
    let mut m = data.len();
    if n == 2 {
        let fill = |l: &mut [u8]| {
            l[..8].copy_from_slice(&(data.len() as u64).to_le_bytes());
            if data.len() <= CARRY {
                l[8..8 + data.len()].copy_from_slice(data);
            }
        };
        let take = |q: usize, l: &[u8]| {
            m = u64_at(l, 0);
            if let Some((at, out)) = &mut root_side {
                let (o, b) = at(q);
                bad |= b != m;
                if m <= CARRY {
                    let k = b.min(m);
                    out[o..o + k].copy_from_slice(&l[8..8 + k]);
                }
            }
        };
        if let Err(e) = run(name, g.gather_line(root, fill, take)) {
            return Some(Err(e));
        }
    }
    let done = |bad: bool| Some(if bad { Err(MPI_ERR_TRUNCATE) } else { Ok(()) });
    if n == 1 || m <= CARRY {
        return done(bad);
    }
    // A larger block: straight into the root's buffer, or padded through a slot.
    if g.one_copy(m) {
        let side = root_side.as_mut().map(|(at, out)| (*at, &mut **out));
        if let Err(e) = run(name, g.gatherv_direct(root, data, side)) {
            return Some(Err(e));
        }
        return done(bad);
    }
    let mut block = data.to_vec();
    block.resize(m, 0);
    let mut all = Vec::new();
    if root_side.is_some() {
        all = vec![0u8; m * n];
    }
    if let Err(e) = run(name, g.gather(root, &block, &mut all)) {
        return Some(Err(e));
    }
    if let Some((at, out)) = root_side {
        let q = 1 - root;
        let (o, b) = at(q);
        let k = b.min(m);
        out[o..o + k].copy_from_slice(&all[q * m..q * m + k]);
    }
    done(bad)
}

/// [`scatterv`] on one or two ranks: the one block that may move is the non-root's,
/// so the root's line carries that block's count alone and, when it fits, the block
/// (no table of counts, no walk over ranks); the count tells both ranks what
/// follows, so they decide alike. Session 30: the 2-rank 8-byte call ran about 660
/// instructions at the root through the general head against a Scatter's 512.
fn scatterv_pair(
    g: &mut ShmColl,
    name: &str,
    root: usize,
    root_side: Option<(Blocks, &[u8])>,
    out: &mut [u8],
) -> Option<Result<(), c_int>> {
    let n = g.size();
    // The root's own block never moves; `m`: the mover's bytes.
    let (mut mine, mut m) = (0, 0);
    let mut mover = None;
    if g.rank() == root {
        if let Some((at, data)) = &root_side {
            let (o, b) = at(root);
            mine = b;
            let k = out.len().min(b);
            out[..k].copy_from_slice(&data[o..o + k]);
            if n == 2 {
                mover = Some(at(1 - root));
            }
        }
        if n == 1 {
            return Some(truncated(out.len(), mine));
        }
        let data = root_side.as_ref().map_or(&[][..], |s| s.1);
        // (At the root without a table, never in a correct program: a count of
        // zero, as the general head's line of zeros.)
        let fill = |l: &mut [u8]| {
            let (o, b) = mover.unwrap_or((0, 0));
            l[..8].copy_from_slice(&(b as u64).to_le_bytes());
            if b <= CARRY {
                l[8..8 + b].copy_from_slice(&data[o..o + b]);
            }
        };
        if let Err(e) = run(name, g.bcast_line(root, fill, |_| {})) {
            return Some(Err(e));
        }
        m = mover.map_or(0, |(_, b)| b);
    } else {
        let take = |l: &[u8]| {
            m = u64_at(l, 0);
            if m <= CARRY {
                let k = out.len().min(m);
                out[..k].copy_from_slice(&l[8..8 + k]);
            }
        };
        if let Err(e) = run(name, g.bcast_line(root, |_| {}, take)) {
            return Some(Err(e));
        }
        mine = m;
    }
    if m > CARRY {
        // A larger block: read straight from the root's buffer, or padded through a
        // slot (the root's own block there is padding).
        if g.one_copy(m) {
            let side = root_side.as_ref().map(|(at, data)| (*at, *data));
            if let Err(e) = run(name, g.scatterv_direct(root, side, out)) {
                return Some(Err(e));
            }
            return Some(truncated(out.len(), mine));
        }
        let mut send = Vec::new();
        if let (Some((_, data)), Some((o, b))) = (&root_side, mover) {
            send = vec![0u8; 2 * m];
            let q = 1 - root;
            send[q * m..q * m + b].copy_from_slice(&data[o..o + b]);
        }
        let mut block = vec![0u8; m];
        if let Err(e) = run(name, g.scatter(root, &send, &mut block)) {
            return Some(Err(e));
        }
        if g.rank() != root {
            let k = out.len().min(m);
            out[..k].copy_from_slice(&block[..k]);
        }
    }
    Some(truncated(out.len(), mine))
}

/// What a Scatterv head of one line left to do.
enum Line {
    /// Every block moved in the line: this rank's count, in bytes.
    Done(usize),
    /// The blocks did not fit: the line's counts (the rest of it zeros).
    Counts([u8; INLINE]),
}

/// MPI_ERR_TRUNCATE unless this rank's buffer holds its block exactly.
fn truncated(have: usize, mine: usize) -> Result<(), c_int> {
    if have != mine {
        Err(MPI_ERR_TRUNCATE)
    } else {
        Ok(())
    }
}

/// A Scatterv head of one line (3 to 7 ranks; fewer: [`scatterv_pair`]): the root writes every count and,
/// when the others' blocks fit beside them, the blocks, straight from its table and
/// buffer into its line; each other rank reads the counts and copies its own block
/// straight out of that line. The root writes blocks while they fit and every rank
/// decides whether all did from the counts alone, so all decide alike and the root
/// walks its table once (session 27: the head was built twice and its counts
/// summed three times, each block found through `at` twice).
fn scatterv_line(
    g: &mut ShmColl,
    root: usize,
    root_side: Option<&(Blocks, &[u8])>,
    out: &mut [u8],
) -> Result<Line, myrix_mpi::coll::CollError> {
    let (n, me) = (g.size(), g.rank());
    let mut fit = false;
    let mut mine = 0;
    let mut counts = [0u8; INLINE];
    match root_side {
        Some((at, data)) if me == root => {
            let fill = |l: &mut [u8]| {
                let mut w = 8 * n;
                for q in 0..n {
                    let (o, b) = at(q);
                    l[8 * q..8 * q + 8].copy_from_slice(&(b as u64).to_le_bytes());
                    if q == root {
                        // The root's own block never moves.
                        mine = b;
                        let k = out.len().min(b);
                        out[..k].copy_from_slice(&data[o..o + k]);
                    } else {
                        let end = w.saturating_add(b);
                        if end <= INLINE {
                            l[w..end].copy_from_slice(&data[o..o + b]);
                        }
                        w = end;
                    }
                }
                fit = w <= INLINE;
                if !fit {
                    counts[..8 * n].copy_from_slice(&l[..8 * n]);
                }
            };
            g.bcast_line(root, fill, |_| {})?;
        }
        _ => {
            let take = |l: &[u8]| {
                // One pass: the others' total (does it fit?) and where this
                // rank's block starts.
                let (mut w, mut at) = (8 * n, 0);
                for q in (0..n).filter(|&q| q != root) {
                    if q == me {
                        at = w;
                    }
                    w = w.saturating_add(u64_at(l, 8 * q));
                }
                mine = u64_at(l, 8 * me);
                fit = w <= INLINE;
                if fit {
                    let k = out.len().min(mine);
                    out[..k].copy_from_slice(&l[at..at + k]);
                } else {
                    counts[..8 * n].copy_from_slice(&l[..8 * n]);
                }
            };
            // (At the root without a table, never in a correct program: a line of
            // zeros, as before.)
            g.bcast_line(root, |l| l.fill(0), take)?;
        }
    }
    Ok(if fit {
        Line::Done(mine)
    } else {
        Line::Counts(counts)
    })
}

/// Scatterv: the root's blocks (`at(q)` of `data`, `root_side` at the root) to
/// every rank's `out` (its own block's bytes); see [`gatherv`].
pub(super) fn scatterv(
    c: Via,
    name: &str,
    root: usize,
    root_side: Option<(Blocks, &[u8])>,
    out: &mut [u8],
) -> Option<Result<(), c_int>> {
    let s = c.get(Which::Scatter, 0)?;
    let mut g = shm::lock(&s);
    let (n, me) = (g.size(), g.rank());
    if n <= 2 {
        return scatterv_pair(&mut g, name, root, root_side, out);
    }
    // Head: every rank's count, then the others' blocks end to end when they fit.
    let hlen = (8 * n).max(INLINE);
    let mut heads = None;
    let mut line;
    let hs: &mut [u8] = if hlen == INLINE {
        // Up to 7 ranks the head is a line, read and written in place.
        match scatterv_line(&mut g, root, root_side.as_ref(), out) {
            Err(e) => return Some(run(name, Err(e))),
            Ok(Line::Done(mine)) => return Some(truncated(out.len(), mine)),
            Ok(Line::Counts(l)) => line = l,
        }
        &mut line
    } else {
        heads.insert(Scratch::new(hlen)).buf()
    };
    let fits = |hs: &[u8]| {
        (0..n)
            .filter(|&q| q != root)
            .try_fold(8 * n, |a, q| a.checked_add(u64_at(hs, 8 * q)))
            .is_some_and(|t| t <= hlen)
    };
    let small = hlen == INLINE;
    if !small {
        if let Some((at, data)) = &root_side {
            for q in 0..n {
                hs[8 * q..8 * q + 8].copy_from_slice(&(at(q).1 as u64).to_le_bytes());
            }
            if fits(hs) {
                let mut w = 8 * n;
                for q in (0..n).filter(|&q| q != root) {
                    let (o, b) = at(q);
                    hs[w..w + b].copy_from_slice(&data[o..o + b]);
                    w += b;
                }
            }
        }
        if let Err(e) = run(name, g.bcast(root, hs)) {
            return Some(Err(e));
        }
    }
    let hs: &[u8] = hs;
    // (A small head that fit returned above.)
    let fit = !small && fits(hs);
    let count = |q: usize| u64_at(hs, 8 * q);
    let mine = count(me);
    let k = out.len().min(mine);
    if me == root {
        // The root's own block never moves.
        if let Some((at, data)) = &root_side {
            let o = at(me).0;
            out[..k].copy_from_slice(&data[o..o + k]);
        }
    } else if fit {
        let w = 8 * n + (0..me).filter(|&q| q != root).map(count).sum::<usize>();
        out[..k].copy_from_slice(&hs[w..w + k]);
    }
    if !fit {
        let m = (0..n).map(count).max().unwrap_or(0);
        if g.one_copy(m) {
            // Large blocks: each rank reads its own from the root's buffer.
            let side = root_side.as_ref().map(|(at, data)| (*at, *data));
            if let Err(e) = run(name, g.scatterv_direct(root, side, out)) {
                return Some(Err(e));
            }
            return Some(truncated(out.len(), mine));
        }
        if !worth(m.checked_mul(n), (0..n).map(count).sum()) {
            return None;
        }
        let mut send = Vec::new();
        if let Some((at, data)) = &root_side {
            send = vec![0u8; m * n];
            for q in 0..n {
                let (o, b) = at(q);
                send[q * m..q * m + b].copy_from_slice(&data[o..o + b]);
            }
        }
        let mut block = vec![0u8; m];
        if let Err(e) = run(name, g.scatter(root, &send, &mut block)) {
            return Some(Err(e));
        }
        if me != root {
            out[..k].copy_from_slice(&block[..k]);
        }
    }
    Some(truncated(out.len(), mine))
}

/// Alltoallv of packed blocks: this rank's blocks `sat(q)` of `data` to each rank,
/// whose blocks `rat(q)` of `out` receive them; see [`gatherv`].
pub(super) fn alltoallv(
    c: &CommRef,
    name: &str,
    data: &[u8],
    sat: Blocks,
    out: &mut [u8],
    rat: Blocks,
) -> Option<Result<(), c_int>> {
    let s = shm::get(c, Which::Alltoall, 0)?;
    let mut g = shm::lock(&s);
    let (n, me) = (g.size(), g.rank());
    // Head: this rank's largest block and total (u32, saturated), then its blocks
    // padded to its largest when they all fit.
    let mx = (0..n).map(|q| sat(q).1).max().unwrap_or(0);
    let tot: usize = (0..n).map(|q| sat(q).1).sum();
    let sat32 = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    let fits = |mx: usize| mx.checked_mul(n).is_some_and(|b| 8 + b <= INLINE);
    let mut head = [0u8; INLINE];
    head[..4].copy_from_slice(&sat32(mx).to_le_bytes());
    head[4..8].copy_from_slice(&sat32(tot).to_le_bytes());
    if fits(mx) {
        for q in 0..n {
            let (o, b) = sat(q);
            head[8 + q * mx..8 + q * mx + b].copy_from_slice(&data[o..o + b]);
        }
    }
    let mut heads = Scratch::new(INLINE * n);
    let hs = heads.buf();
    if let Err(e) = run(name, g.allgather(&head, hs)) {
        return Some(Err(e));
    }
    let mxq = |q: usize| u32_at(hs, q * INLINE);
    // A block longer than any sent: the ranks' counts disagree.
    let mut bad = false;
    if (0..n).all(|q| fits(mxq(q))) {
        for q in 0..n {
            let (o, b) = rat(q);
            bad |= b > mxq(q);
            let k = b.min(mxq(q));
            let at = q * INLINE + 8 + me * mxq(q);
            out[o..o + k].copy_from_slice(&hs[at..at + k]);
        }
        return Some(if bad { Err(MPI_ERR_TRUNCATE) } else { Ok(()) });
    }
    let (mut m, mut moved) = (0, 0usize);
    let saturated = (0..n)
        .any(|q| mxq(q) == u32::MAX as usize || u32_at(hs, q * INLINE + 4) == u32::MAX as usize);
    if saturated {
        // Sizes beyond 32 bits: a second step with them whole.
        let mut cs = vec![0u8; 16 * n];
        let mut me16 = [0u8; 16];
        me16[..8].copy_from_slice(&(mx as u64).to_le_bytes());
        me16[8..].copy_from_slice(&(tot as u64).to_le_bytes());
        if let Err(e) = run(name, g.allgather(&me16, &mut cs)) {
            return Some(Err(e));
        }
        for q in 0..n {
            m = m.max(u64_at(&cs, 16 * q));
            moved = moved.saturating_add(u64_at(&cs, 16 * q + 8));
        }
    } else {
        for q in 0..n {
            m = m.max(mxq(q));
            moved += u32_at(hs, q * INLINE + 4);
        }
    }
    if g.one_copy(m) {
        // Large blocks: each rank reads its block of every other's buffer straight
        // into its own (`coll::shm`'s one-copy way), then copies its own block.
        let mut long = false;
        let r = g.alltoallv_direct(data, sat, out, rat).map(|l| long = l);
        if let Err(e) = run(name, r) {
            return Some(Err(e));
        }
        let ((o, b), (so, sb)) = (rat(me), sat(me));
        let k = b.min(sb);
        out[o..o + k].copy_from_slice(&data[so..so + k]);
        return Some(if long || b > sb {
            Err(MPI_ERR_TRUNCATE)
        } else {
            Ok(())
        });
    }
    if !worth(m.checked_mul(n).and_then(|x| x.checked_mul(n)), moved) {
        return None;
    }
    let len = m * n;
    let (mut send, mut all) = STAGE.with(|c| std::mem::take(&mut *c.borrow_mut()));
    for v in [&mut send, &mut all] {
        // Zeroed only where it grows: the bytes a rank reads are those its peer wrote.
        if v.len() < len {
            if v.try_reserve(len - v.len()).is_err() {
                return Some(Err(MPI_ERR_NO_MEM));
            }
            v.resize(len, 0);
        }
    }
    for q in (0..n).filter(|&q| q != me) {
        let (o, b) = sat(q);
        send[q * m..q * m + b].copy_from_slice(&data[o..o + b]);
    }
    // Alone: nothing to exchange (our block is copied below).
    let r = if n == 1 {
        Ok(())
    } else {
        run(name, g.alltoall(&send[..len], &mut all[..len]))
    };
    for q in (0..n).filter(|_| r.is_ok()) {
        let (o, b) = rat(q);
        bad |= b > m;
        let k = b.min(m);
        if q == me {
            // Our own block straight from the caller's buffer, not through the segment.
            let (so, sb) = sat(me);
            bad |= b > sb;
            out[o..o + k.min(sb)].copy_from_slice(&data[so..so + k.min(sb)]);
        } else {
            out[o..o + k].copy_from_slice(&all[q * m..q * m + k]);
        }
    }
    if len <= KEEP {
        STAGE.with(|c| *c.borrow_mut() = (send, all));
    }
    Some(match r {
        Err(e) => Err(e),
        Ok(()) if bad => Err(MPI_ERR_TRUNCATE),
        Ok(()) => Ok(()),
    })
}
