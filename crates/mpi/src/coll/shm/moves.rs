//! The collectives of [`ShmColl`] that move data without combining it: bcast,
//! gather, scatter, allgather(v), alltoall. A step's data rides in the writer's line
//! when it fits ([`INLINE`] bytes), else in its slot, a slot per step.

use super::{Area, ShmColl, INLINE};
use crate::coll::CollError;

impl ShmColl {
    /// MPI_Bcast of `buf` (the same length everywhere) from `root`, a slot per step.
    pub fn bcast(&mut self, root: usize, buf: &mut [u8]) -> Result<(), CollError> {
        self.check_root(root)?;
        if self.g.n == 1 {
            return Ok(());
        }
        if self.one_copy(buf.len()) {
            return self.bcast_direct(root, buf);
        }
        let slot = self.g.slot;
        let mut off = 0;
        loop {
            let c = slot.min(buf.len() - off);
            let a = Area::of(c);
            let s = self.next();
            if self.me == root {
                self.claim(s, a);
                self.write(s, a, 0, &buf[off..off + c]);
                self.post(s);
            } else {
                self.post(s);
                self.wait(root, s);
                buf[off..off + c].copy_from_slice(self.read(root, s, a, 0, c));
            }
            off += c;
            if off >= buf.len() {
                return Ok(());
            }
        }
    }

    /// MPI_Gather: every rank's `send` (the same length everywhere) into `recv` at
    /// `root`, rank after rank.
    pub fn gather(&mut self, root: usize, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
        self.check_root(root)?;
        let (n, me, b) = (self.g.n, self.me, send.len());
        if me == root {
            super::super::check_len("gather", recv.len(), n * b)?;
            recv[me * b..(me + 1) * b].copy_from_slice(send);
        }
        if n == 1 || b == 0 {
            return Ok(());
        }
        if self.one_copy(b) {
            return self.gather_direct(root, send, recv);
        }
        let mut off = 0;
        while off < b {
            let c = self.g.slot.min(b - off);
            let a = Area::of(c);
            let s = self.next();
            if me == root {
                self.post(s);
                for q in (0..n).filter(|&q| q != me) {
                    self.wait(q, s);
                    recv[q * b + off..q * b + off + c].copy_from_slice(self.read(q, s, a, 0, c));
                }
            } else {
                self.claim(s, a);
                self.write(s, a, 0, &send[off..off + c]);
                self.post(s);
            }
            off += c;
        }
        Ok(())
    }

    /// Per step of a scatter or alltoall of blocks of `b` bytes: the area, the bytes
    /// of each block it carries, and where block `q` lies in it (`q * stride`).
    fn blocks(&self, b: usize) -> (Area, usize, usize) {
        if b * self.g.n <= INLINE {
            (Area::Line, b, b)
        } else {
            let per = self.per_rank();
            (Area::Slot, per, per)
        }
    }

    /// MPI_Scatter: block `q` of the root's `send` (`n` blocks of `recv.len()`) to
    /// rank `q`'s `recv`.
    pub fn scatter(&mut self, root: usize, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
        self.check_root(root)?;
        let (n, me, b) = (self.g.n, self.me, recv.len());
        if me == root {
            super::super::check_len("scatter", send.len(), n * b)?;
            recv.copy_from_slice(&send[me * b..(me + 1) * b]);
        }
        if n == 1 || b == 0 {
            return Ok(());
        }
        if self.one_copy(b) {
            return self.scatter_direct(root, send, recv);
        }
        let (a, per, stride) = self.blocks(b);
        let mut off = 0;
        while off < b {
            let c = per.min(b - off);
            let s = self.next();
            if me == root {
                self.claim(s, a);
                for q in (0..n).filter(|&q| q != me) {
                    self.write(s, a, q * stride, &send[q * b + off..q * b + off + c]);
                }
                self.post(s);
            } else {
                self.post(s);
                self.wait(root, s);
                recv[off..off + c].copy_from_slice(self.read(root, s, a, me * stride, c));
            }
            off += c;
        }
        Ok(())
    }

    /// MPI_Allgather: every rank's `send` into every `recv`, rank after rank.
    pub fn allgather(&mut self, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
        let (n, me, b) = (self.g.n, self.me, send.len());
        super::super::check_len("allgather", recv.len(), n * b)?;
        recv[me * b..(me + 1) * b].copy_from_slice(send);
        if n == 1 || b == 0 {
            return Ok(());
        }
        if self.one_copy(b) {
            return self.allgatherv_direct(send, recv, &|q| (q * b, b));
        }
        let slot = self.g.slot;
        let mut off = 0;
        while off < b {
            let c = slot.min(b - off);
            let a = Area::of(c);
            let s = self.next();
            self.claim(s, a);
            self.write(s, a, 0, &send[off..off + c]);
            self.post(s);
            for q in (0..n).filter(|&q| q != me) {
                self.wait(q, s);
                recv[q * b + off..q * b + off + c].copy_from_slice(self.read(q, s, a, 0, c));
            }
            self.all_at = self.all_at.max(s);
            off += c;
        }
        Ok(())
    }

    /// MPI_Allgatherv on packed bytes: rank `q`'s `counts[q]` bytes at `displs[q]` of
    /// every `recv` (`send` is this rank's block).
    pub fn allgatherv(
        &mut self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<(), CollError> {
        let (n, me) = (self.g.n, self.me);
        super::super::check_blocks("allgatherv", n, counts, displs, recv.len())?;
        super::super::check_len("allgatherv", send.len(), counts[me])?;
        recv[displs[me]..displs[me] + counts[me]].copy_from_slice(send);
        let most = counts.iter().copied().max().unwrap_or(0);
        if n == 1 || most == 0 {
            return Ok(());
        }
        if self.one_copy(most) {
            return self.allgatherv_direct(send, recv, &|q| (displs[q], counts[q]));
        }
        let slot = self.g.slot;
        let mut off = 0;
        while off < most {
            let s = self.next();
            let mine = counts[me].saturating_sub(off).min(slot);
            if mine > 0 {
                self.claim(s, Area::of(mine));
                self.write(s, Area::of(mine), 0, &send[off..off + mine]);
            }
            self.post(s);
            for q in (0..n).filter(|&q| q != me) {
                let c = counts[q].saturating_sub(off).min(slot);
                if c > 0 {
                    self.wait(q, s);
                    let at = displs[q] + off;
                    recv[at..at + c].copy_from_slice(self.read(q, s, Area::of(c), 0, c));
                }
            }
            // Ranks with nothing left this step still post it; wait for them too so
            // the claim cache stays right.
            self.wait_all(s);
            off += slot;
        }
        Ok(())
    }

    /// MPI_Alltoall: block `q` of `send` (`n` blocks of equal length) to rank `q`,
    /// whose `recv` gets it as block `me`.
    pub fn alltoall(&mut self, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
        let (n, me) = (self.g.n, self.me);
        if send.len() % n != 0 {
            return Err(CollError::Args(format!(
                "alltoall: {} bytes for {n} ranks",
                send.len()
            )));
        }
        super::super::check_len("alltoall", recv.len(), send.len())?;
        let b = send.len() / n;
        recv[me * b..(me + 1) * b].copy_from_slice(&send[me * b..(me + 1) * b]);
        if n == 1 || b == 0 {
            return Ok(());
        }
        if self.one_copy(b) {
            return self.alltoall_direct(send, recv);
        }
        let (a, per, stride) = self.blocks(b);
        let mut off = 0;
        while off < b {
            let c = per.min(b - off);
            let s = self.next();
            self.claim(s, a);
            for q in (0..n).filter(|&q| q != me) {
                self.write(s, a, q * stride, &send[q * b + off..q * b + off + c]);
            }
            self.post(s);
            for q in (0..n).filter(|&q| q != me) {
                self.wait(q, s);
                recv[q * b + off..q * b + off + c].copy_from_slice(self.read(
                    q,
                    s,
                    a,
                    me * stride,
                    c,
                ));
            }
            self.all_at = self.all_at.max(s);
            off += c;
        }
        Ok(())
    }
}
