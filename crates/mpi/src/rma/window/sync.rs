//! The synchronization of a window: fence, lock/unlock, lock_all, flush, sync,
//! post/start/complete/wait, attach/detach, free.

use super::memory::export_pieces;
use super::{Window, EXCLUSIVE, NONE, SHARED, STARTED};
use crate::coll::{self, Pt2Pt};
use crate::rma::ctrl::{self, Attachment};
use crate::rma::{Flavor, LockKind, RmaError};
use myrix_rsm::spin::SpinWait;
use std::sync::atomic::{fence, Ordering};

impl Window {
    /// Errors of the accesses since the last check: a target freed its window or
    /// its process is gone (a full check per touched target: use at epoch ends).
    fn check_touched(&self, which: impl Iterator<Item = usize>) -> Result<(), RmaError> {
        fence(Ordering::SeqCst);
        let mut err = self.take_deferred();
        for r in which {
            if !self.touched[r].swap(false, Ordering::Relaxed) {
                continue;
            }
            let t = &self.targets[r];
            if let (Some(rem), Some(n)) = (&t.remote, &self.net) {
                if let Err(e) = rem.flush(&n.side) {
                    err = Err(e);
                }
                continue;
            }
            if t.ctrl().state() != ctrl::LIVE {
                err = Err(RmaError::Gone(r));
            }
            if let Some(i) = &t.import {
                if i.check().is_err() {
                    err = Err(RmaError::Gone(r));
                }
            }
        }
        err
    }

    /// MPI_Win_fence (collective): ends the previous fence epoch and (unless
    /// `nosucceed`) opens the next one.
    pub fn fence(&self, p: &mut dyn Pt2Pt, nosucceed: bool) -> Result<(), RmaError> {
        let mut e = self.epochs();
        if e.lock_all || e.start.is_some() || e.post.is_some() || self.any_lock() {
            return Err(RmaError::Sync(
                "MPI_Win_fence inside a lock or PSCW epoch".into(),
            ));
        }
        let checked = self.check_touched(0..self.size);
        coll::barrier(p)?;
        fence(Ordering::SeqCst);
        e.fence = !nosucceed;
        self.fence_used.store(false, Ordering::Relaxed);
        self.refresh_all(&e);
        checked
    }

    /// Ends a fence epoch that no access of this rank used (a lock, lock_all, start
    /// or post may follow such a fence).
    fn end_unused_fence(&self, e: &mut super::Epochs) {
        if e.fence && !self.fence_used.load(Ordering::Relaxed) {
            e.fence = false;
            self.refresh_all(e);
        }
    }

    fn any_lock(&self) -> bool {
        self.access
            .iter()
            .any(|a| a.load(Ordering::Relaxed) & (SHARED | EXCLUSIVE) != 0)
    }

    /// MPI_Win_lock (`nocheck`: MPI_MODE_NOCHECK, no lock is taken).
    pub fn lock(&self, kind: LockKind, r: usize, nocheck: bool) -> Result<(), RmaError> {
        let t = self.targets.get(r).ok_or(RmaError::Rank(r))?;
        let mut e = self.epochs();
        self.end_unused_fence(&mut e);
        if e.lock_all
            || e.fence
            || e.start.is_some()
            || self.access[r].load(Ordering::Relaxed) != NONE
        {
            return Err(RmaError::Sync(format!(
                "MPI_Win_lock of rank {r} inside another epoch to it"
            )));
        }
        if !nocheck {
            self.lock_one(t, kind == LockKind::Exclusive)?;
        }
        let st = match (kind, nocheck) {
            (_, true) => SHARED | 8,
            (LockKind::Shared, _) => SHARED,
            (LockKind::Exclusive, _) => EXCLUSIVE,
        };
        self.access[r].store(st, Ordering::Release);
        Ok(())
    }

    /// MPI_Win_unlock: completes the accesses to `r` and releases its lock.
    pub fn unlock(&self, r: usize) -> Result<(), RmaError> {
        let t = self.targets.get(r).ok_or(RmaError::Rank(r))?;
        let _e = self.epochs();
        let st = self.access[r].load(Ordering::Relaxed);
        if st & (SHARED | EXCLUSIVE) == 0 {
            return Err(RmaError::Sync(format!(
                "MPI_Win_unlock of rank {r}, not locked"
            )));
        }
        if t.remote.is_some() {
            // Its records (the lock's own included) are waited for before it goes.
            self.touched[r].store(true, Ordering::Relaxed);
        }
        let checked = self.check_touched(std::iter::once(r));
        let released = match st {
            SHARED => self.unlock_one(t, false),
            EXCLUSIVE => self.unlock_one(t, true),
            _ => Ok(()),
        };
        self.access[r].store(NONE, Ordering::Release);
        checked.and(released)
    }

    /// MPI_Win_lock_all: a shared lock on every rank.
    pub fn lock_all(&self, nocheck: bool) -> Result<(), RmaError> {
        let mut e = self.epochs();
        self.end_unused_fence(&mut e);
        if e.lock_all || e.fence || e.start.is_some() || self.any_lock() {
            return Err(RmaError::Sync(
                "MPI_Win_lock_all inside another epoch".into(),
            ));
        }
        if !nocheck {
            for t in &self.targets {
                self.lock_one(t, false)?;
            }
        }
        e.lock_all = true;
        self.lock_all_nocheck.store(nocheck, Ordering::Relaxed);
        self.refresh_all(&e);
        Ok(())
    }

    pub fn unlock_all(&self) -> Result<(), RmaError> {
        let mut e = self.epochs();
        if !e.lock_all {
            return Err(RmaError::Sync("MPI_Win_unlock_all without lock_all".into()));
        }
        if self.net.is_some() {
            // Every remote target is flushed before its lock goes.
            for (r, t) in self.targets.iter().enumerate() {
                if t.remote.is_some() {
                    self.touched[r].store(true, Ordering::Relaxed);
                }
            }
        }
        let mut checked = self.check_touched(0..self.size);
        if !self.lock_all_nocheck.load(Ordering::Relaxed) {
            for t in &self.targets {
                if let Err(e) = self.unlock_one(t, false) {
                    checked = checked.and(Err(e));
                }
            }
        }
        e.lock_all = false;
        self.refresh_all(&e);
        checked
    }

    /// MPI_Win_flush(_local)(_all): every access so far is complete at the target
    /// (they complete when issued; this orders them before later accesses and
    /// reports a target that freed its window). `None`: every rank.
    pub fn flush(&self, r: Option<usize>) -> Result<(), RmaError> {
        let Some(r) = r else {
            fence(Ordering::SeqCst);
            self.take_deferred()?;
            let mut res = Ok(());
            for (r, t) in self.targets.iter().enumerate() {
                let one = match (&t.remote, &self.net) {
                    (Some(rem), Some(n)) => rem.flush(&n.side),
                    _ if t.ctrl().state() != ctrl::LIVE => Err(RmaError::Gone(r)),
                    _ => Ok(()),
                };
                res = res.and(one);
            }
            return res;
        };
        self.flush_rank(r)
    }

    /// MPI_Win_flush of rank `r` (the latency benchmarks' every other call:
    /// inline, its errors built out of line).
    #[inline]
    pub fn flush_rank(&self, r: usize) -> Result<(), RmaError> {
        fence(Ordering::SeqCst);
        self.take_deferred()?;
        let Some(t) = self.targets.get(r) else {
            return Err(RmaError::Rank(r));
        };
        if !self.access_all.load(Ordering::Relaxed)
            && self.access[r].load(Ordering::Relaxed) & (SHARED | EXCLUSIVE) == 0
        {
            return Err(no_passive_epoch(r));
        }
        if let (Some(rem), Some(n)) = (&t.remote, &self.net) {
            return rem.flush(&n.side);
        }
        if t.ctrl().state() != ctrl::LIVE {
            return Err(RmaError::Gone(r));
        }
        Ok(())
    }

    /// MPI_Win_sync: a full memory barrier between this process's loads and stores
    /// of its window and RMA.
    pub fn sync(&self) {
        fence(Ordering::SeqCst);
    }

    /// MPI_Win_post: exposes this rank's window to `group` (window ranks).
    pub fn post(&self, group: &[usize]) -> Result<(), RmaError> {
        let mut e = self.epochs();
        self.end_unused_fence(&mut e);
        if e.post.is_some() || e.fence {
            return Err(RmaError::Sync(
                "MPI_Win_post inside another exposure epoch".into(),
            ));
        }
        check_group(group, self.size)?;
        fence(Ordering::SeqCst);
        let mut res = Ok(());
        for &o in group {
            match &self.targets[o].remote {
                Some(rem) => res = res.and(rem.post(self.rank)),
                None => self.targets[o].ctrl().post_from(self.rank),
            }
        }
        e.post = Some(group.to_vec());
        res
    }

    /// MPI_Win_start: waits for each rank of `group` to post (unless `nocheck`).
    pub fn start(&self, group: &[usize], nocheck: bool) -> Result<(), RmaError> {
        let mut e = self.epochs();
        self.end_unused_fence(&mut e);
        if e.start.is_some() || e.fence || e.lock_all {
            return Err(RmaError::Sync(
                "MPI_Win_start inside another access epoch".into(),
            ));
        }
        check_group(group, self.size)?;
        if group
            .iter()
            .any(|&t| self.access[t].load(Ordering::Relaxed) != NONE)
        {
            return Err(RmaError::Sync("MPI_Win_start of a locked rank".into()));
        }
        let me = self.targets[self.rank].ctrl();
        for &t in group {
            if !nocheck {
                let seen = e.posts_seen[t];
                self.spin_until(|| me.posts(t) > seen)?;
                e.posts_seen[t] += 1;
            }
            self.access[t].store(STARTED, Ordering::Release);
        }
        e.start = Some(group.to_vec());
        Ok(())
    }

    /// MPI_Win_complete: ends the access epoch of start.
    pub fn complete(&self) -> Result<(), RmaError> {
        let mut e = self.epochs();
        let g = e
            .start
            .take()
            .ok_or_else(|| RmaError::Sync("MPI_Win_complete without start".into()))?;
        for &t in &g {
            if self.targets[t].remote.is_some() {
                self.touched[t].store(true, Ordering::Relaxed);
            }
        }
        let mut checked = self.check_touched(g.iter().copied());
        for &t in &g {
            match &self.targets[t].remote {
                Some(rem) => checked = checked.and(rem.complete(self.rank, self.size)),
                None => self.targets[t].ctrl().complete_from(self.rank),
            }
            self.access[t].store(NONE, Ordering::Release);
        }
        checked
    }

    /// MPI_Win_wait (`block`) or MPI_Win_test: whether every rank of the post
    /// group completed; the exposure epoch ends when they have.
    pub fn wait(&self, block: bool) -> Result<bool, RmaError> {
        let mut e = self.epochs();
        let g = e
            .post
            .clone()
            .ok_or_else(|| RmaError::Sync("MPI_Win_wait without post".into()))?;
        let me = self.targets[self.rank].ctrl();
        let done = |e: &super::Epochs| g.iter().all(|&o| me.completes(o) > e.completes_seen[o]);
        self.drive();
        if !done(&e) {
            if !block {
                return Ok(false);
            }
            self.spin_until(|| done(&e))?;
        }
        for &o in &g {
            e.completes_seen[o] += 1;
        }
        e.post = None;
        fence(Ordering::SeqCst);
        Ok(true)
    }

    /// MPI_Win_attach: exposes `len` bytes at `ptr` in this dynamic window (in
    /// pieces, one per segment holding its pages: [`export_pieces`]). Ranks of this
    /// node map the pieces' segments; ranks of other nodes reach attached memory
    /// through this rank's service thread, which checks each record's address
    /// against the same table, so nothing is exported on the network for it.
    pub fn attach(&self, ptr: *mut u8, len: usize) -> Result<(), RmaError> {
        if self.flavor != Flavor::Dynamic {
            return Err(RmaError::Flavor);
        }
        if len == 0 {
            return Ok(());
        }
        let mut at = self.attached.lock().unwrap_or_else(|p| p.into_inner());
        if at.iter().any(|a| a.0 == ptr as usize) {
            return Err(RmaError::Attach(format!("{ptr:p} is attached already")));
        }
        let pieces = export_pieces(&self.ctl, ptr, len)?;
        let me = self.targets[self.rank].ctrl();
        for (k, p) in pieces.iter().enumerate() {
            let a = Attachment {
                addr: p.addr as u64,
                len: p.len as u64,
                seg: p.id.0,
                page: p.page as u64,
            };
            if !me.attach(a) {
                for q in &pieces[..k] {
                    me.detach(q.addr as u64);
                }
                return Err(RmaError::Attach(format!(
                    "at most {} regions (or pieces of regions) may be attached at once",
                    ctrl::ATTACH_MAX
                )));
            }
        }
        at.push((ptr as usize, pieces));
        Ok(())
    }

    /// MPI_Win_detach.
    pub fn detach(&self, ptr: *const u8) -> Result<(), RmaError> {
        if self.flavor != Flavor::Dynamic {
            return Err(RmaError::Flavor);
        }
        let mut at = self.attached.lock().unwrap_or_else(|p| p.into_inner());
        let i = at
            .iter()
            .position(|a| a.0 == ptr as usize)
            .ok_or_else(|| RmaError::Attach(format!("{ptr:p} is not attached")))?;
        let me = self.targets[self.rank].ctrl();
        for p in &at[i].1 {
            me.detach(p.addr as u64);
        }
        // The exports go once no window or attachment holds their pages.
        at.remove(i);
        Ok(())
    }

    /// MPI_Win_free (collective): refused inside an epoch; waits for every rank,
    /// then removes this rank's segments.
    pub fn free(&self, p: &mut dyn Pt2Pt) -> Result<(), RmaError> {
        {
            let e = self.epochs();
            if e.lock_all || e.start.is_some() || e.post.is_some() || self.any_lock() {
                return Err(RmaError::Sync(
                    "MPI_Win_free inside a lock or PSCW epoch".into(),
                ));
            }
        }
        coll::barrier(p)?;
        self.targets[self.rank].ctrl().set_state(ctrl::FREED);
        Ok(())
    }

    /// Takes a lock at `t`: on this node the lock word itself, else through its
    /// service thread.
    fn lock_one(&self, t: &super::Target, exclusive: bool) -> Result<(), RmaError> {
        match (&t.remote, &self.net) {
            (Some(rem), Some(n)) => rem.lock(&n.side, exclusive),
            _ => {
                let mut dead = None;
                let mut gone = || {
                    dead = self.dead_peer();
                    dead.is_some()
                };
                let got = if exclusive {
                    t.ctrl().lock_exclusive_unless(&mut gone)
                } else {
                    t.ctrl().lock_shared_unless(&mut gone)
                };
                match (got, dead) {
                    (true, _) => Ok(()),
                    (false, d) => Err(RmaError::Gone(d.unwrap_or(usize::MAX))),
                }
            }
        }
    }

    /// A rank of this node whose process is gone (its control block's connection
    /// broke), if any: waits on other ranks give up with an error then, rather than
    /// wait for ever for a lock, post or complete a dead rank would have released.
    fn dead_peer(&self) -> Option<usize> {
        self.ctrl_imports
            .iter()
            .find(|(_, i)| i.check().is_err())
            .map(|(r, _)| *r)
    }

    /// Spins until `ready`, giving up with an error when a rank of the node died.
    fn spin_until(&self, mut ready: impl FnMut() -> bool) -> Result<(), RmaError> {
        let mut s = SpinWait::new();
        let mut k = 0u32;
        while !ready() {
            self.drive();
            k = k.wrapping_add(1);
            if k % ctrl::CHECK_EVERY == 0 {
                if let Some(r) = self.dead_peer() {
                    return Err(RmaError::Gone(r));
                }
            }
            s.spin();
        }
        Ok(())
    }

    fn unlock_one(&self, t: &super::Target, exclusive: bool) -> Result<(), RmaError> {
        match (&t.remote, &self.net) {
            (Some(rem), Some(n)) => rem.unlock(&n.side, exclusive),
            _ => {
                if exclusive {
                    t.ctrl().unlock_exclusive()
                } else {
                    t.ctrl().unlock_shared()
                }
                Ok(())
            }
        }
    }

    /// In a window spanning nodes, takes in the frames that arrived (remote
    /// writers' counters) while this rank waits on its control block.
    fn drive(&self) {
        if let Some(n) = &self.net {
            let _ = n.ctrl.load_u64(0);
        }
    }
}

fn check_group(g: &[usize], size: usize) -> Result<(), RmaError> {
    match g.iter().find(|&&r| r >= size) {
        Some(&r) => Err(RmaError::Rank(r)),
        None => Ok(()),
    }
}

#[cold]
fn no_passive_epoch(r: usize) -> RmaError {
    RmaError::Sync(format!(
        "flush of rank {r} outside a passive-target epoch to it"
    ))
}
