//! An imported segment on `shm`: the data file mapped into this process, so a put is a
//! copy into the exporter's memory and a get a copy out of it, with no call into the
//! exporting process (one-sided).
//!
//! Every access first checks the connection (the control block's state, and the
//! `aborted` flag the watcher sets when the exporter dies) and checks it again after
//! the copy, so a put or get that overlaps an unpublish reports `ConnAborted`.
//! Barrier close adds a full fence and an exact liveness check (the exporter's lock).
//! This module must never access the mapping outside `0..len`: the front end checks
//! bounds, and `Map` asserts them again.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use myrix_rsm_proto::{NodeId, Perm, RsmError, SegmentId};

use super::ctl::Ctl;
use super::mem::{self, Map};
use super::registry::{self as reg, DirLock};
use super::serve;
use super::watch;
use crate::backend::ImportBackend;
use crate::export::SignalSender;
use crate::import::{Scalars, ScalarsMut};
use crate::SignalFlags;

/// What the watcher thread shares with an import.
pub(crate) struct Conn {
    pub(crate) dir: PathBuf,
    pub(crate) id: SegmentId,
    pub(crate) ctl: Ctl,
    /// This import's own open file description of the control block, to test the
    /// exporter's lock with.
    pub(crate) ctl_file: File,
    pub(crate) slot: usize,
    /// Set once the exporter is found dead.
    pub(crate) aborted: AtomicBool,
}

impl Conn {
    pub(crate) fn check(&self) -> Result<(), RsmError> {
        if self.aborted.load(Ordering::Relaxed) || !self.ctl.live() {
            Err(RsmError::ConnAborted)
        } else {
            Ok(())
        }
    }

    /// The exact check: is the exporter's lock still held? If not, the connection is
    /// aborted and what is left named of the segment removed.
    pub(crate) fn check_owner(&self) -> Result<(), RsmError> {
        self.check()?;
        if mem::locked_by_other(&self.ctl_file) {
            return Ok(());
        }
        self.abort();
        Err(RsmError::ConnAborted)
    }

    /// Marks the connection aborted, after removing what an older version's dead
    /// exporter left named (the segment's name went with it), so whoever sees the
    /// abort sees it gone.
    pub(crate) fn abort(&self) {
        if self.aborted.load(Ordering::Acquire) {
            return;
        }
        if let Ok(_lock) = DirLock::take(&self.dir) {
            reg::reap(&self.dir, self.id);
        }
        self.aborted.store(true, Ordering::Release);
        mem::futex_wake(self.ctl.mailbox(Some(self.slot)).pending);
    }
}

pub(crate) struct ShmImport {
    conn: Arc<Conn>,
    data: Map,
    node: NodeId,
    /// The exporter's signal eventfd, fetched at the first post that must poke it
    /// (so an import that never does holds no descriptor for it).
    exporter_sig: Mutex<Option<Arc<File>>>,
    /// This import's own, once a pollable descriptor was asked for (the exporter holds
    /// a copy for its posts, [`serve::register`]).
    sig: Mutex<Option<Arc<File>>>,
}

/// Connects to segment `id` of this host (the exporter's thread hands over the files,
/// [`super::serve`]).
pub(crate) fn connect(
    dir: PathBuf,
    node: NodeId,
    id: SegmentId,
    perm: Perm,
) -> Result<ShmImport, RsmError> {
    // The exporter's thread checks the access list and opens the files for us.
    let (ctl_file, seg_file) = serve::fetch(&dir, id, node, perm)?;
    let ctl = Ctl::open(&ctl_file)?;
    if !ctl.valid() || !ctl.live() {
        return Err(RsmError::SegNotPublished);
    }
    if !mem::locked_by_other(&ctl_file) {
        // The exporter died after answering.
        return Err(RsmError::SegNotPublished);
    }
    let (_, _, pid) = mem::whoami();
    let len = usize::try_from(ctl.len()).map_err(|_| RsmError::SegNotPublished)?;
    let meta = seg_file.metadata().map_err(|_| RsmError::SegNotPublished)?;
    if meta.ino() != ctl.ino() || meta.len() < len as u64 || len == 0 {
        return Err(RsmError::SegNotPublished);
    }
    let data = Map::file(&seg_file, len, perm.can_write())?;
    let slot = ctl.claim_slot(pid)?;
    if !ctl.live() {
        ctl.release_slot(slot);
        return Err(RsmError::SegNotPublished);
    }
    let conn = Arc::new(Conn {
        dir,
        id,
        ctl,
        ctl_file,
        slot,
        aborted: AtomicBool::new(false),
    });
    watch::register(&conn);
    Ok(ShmImport {
        conn,
        data,
        node,
        exporter_sig: Mutex::new(None),
        sig: Mutex::new(None),
    })
}

impl ShmImport {
    /// Runs an access between two checks of the connection.
    #[inline]
    fn access(&self, f: impl FnOnce(&Map)) -> Result<(), RsmError> {
        self.conn.check()?;
        f(&self.data);
        self.conn.check()
    }

    fn sig(&self) -> Option<Arc<File>> {
        self.sig.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The exporter's eventfd, asked of its serving thread the first time.
    fn exporter_sig(&self) -> Option<Arc<File>> {
        let mut g = self.exporter_sig.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            let c = &self.conn;
            *g = serve::exporter_sig(&c.dir, c.id, c.slot).ok().map(Arc::new);
        }
        g.clone()
    }
}

impl ImportBackend for ShmImport {
    fn len(&self) -> usize {
        self.data.len()
    }

    fn put(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        self.access(|m| m.write(offset, data))?;
        fence(Ordering::Release);
        Ok(())
    }

    fn get(&self, offset: usize, out: &mut [u8]) -> Result<(), RsmError> {
        fence(Ordering::Acquire);
        self.access(|m| m.read(offset, out))
    }

    fn put_scalars(&self, offset: usize, data: Scalars<'_>) -> Result<(), RsmError> {
        self.access(|m| match data {
            Scalars::U8(d) => m.put8(offset, d),
            Scalars::U16(d) => m.put16(offset, d),
            Scalars::U32(d) => m.put32(offset, d),
            Scalars::U64(d) => m.put64(offset, d),
        })?;
        fence(Ordering::Release);
        Ok(())
    }

    fn get_scalars(&self, offset: usize, out: ScalarsMut<'_>) -> Result<(), RsmError> {
        fence(Ordering::Acquire);
        self.access(|m| match out {
            ScalarsMut::U8(d) => m.get8(offset, d),
            ScalarsMut::U16(d) => m.get16(offset, d),
            ScalarsMut::U32(d) => m.get32(offset, d),
            ScalarsMut::U64(d) => m.get64(offset, d),
        })
    }

    fn map(&self) -> Result<(*mut u8, usize), RsmError> {
        self.conn.check()?;
        Ok((self.data.ptr(), self.data.len()))
    }

    fn open_scope(&self) -> Result<u64, RsmError> {
        self.conn.check()?;
        Ok(0)
    }

    fn order(&self) -> Result<(), RsmError> {
        fence(Ordering::SeqCst);
        Ok(())
    }

    fn close_scope(&self, _token: u64) -> Result<(), RsmError> {
        // Stores to shared memory reach it in program order on every machine myrix runs
        // on once fenced: after this, every write of the scope is visible.
        fence(Ordering::SeqCst);
        self.conn.check_owner()
    }

    fn check(&self) -> Result<(), RsmError> {
        self.conn.check_owner()
    }

    fn signal_post(&self, flags: SignalFlags) -> Result<(), RsmError> {
        self.conn.check()?;
        let me = SignalSender {
            node: self.node,
            pid: mem::whoami().2,
        };
        if self.conn.ctl.mailbox(None).post(me, flags.no_accumulate) {
            if let Some(f) = self.exporter_sig() {
                mem::poke(&f);
            }
        }
        Ok(())
    }

    fn signal_wait(&self, timeout: Option<Duration>) -> Result<SignalSender, RsmError> {
        let sig = self.sig();
        self.conn
            .ctl
            .mailbox(Some(self.conn.slot))
            .wait(timeout, sig.as_deref(), || self.conn.check())
    }

    fn pollfd(&self) -> Result<RawFd, RsmError> {
        self.conn.check()?;
        let mut g = self.sig.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = &*g {
            return Ok(f.as_raw_fd());
        }
        let f = Arc::new(mem::eventfd().map_err(|e| mem::mem_error(&e))?);
        // The exporter keeps a copy to poke; armed only once it has it.
        serve::register(&self.conn.dir, self.conn.id, self.conn.slot, &f)?;
        let mb = self.conn.ctl.mailbox(Some(self.conn.slot));
        mb.armed.store(1, Ordering::SeqCst);
        if mb.pending.load(Ordering::SeqCst) > 0 {
            mem::poke(&f);
        }
        let fd = f.as_raw_fd();
        *g = Some(f);
        Ok(fd)
    }

    fn release_pollfd(&self) -> Result<(), RsmError> {
        let mut g = self.sig.lock().unwrap_or_else(|p| p.into_inner());
        if g.take().is_some() {
            self.conn
                .ctl
                .mailbox(Some(self.conn.slot))
                .armed
                .store(0, Ordering::SeqCst);
        }
        Ok(())
    }

    fn disconnect(&self) -> Result<(), RsmError> {
        let _ = self.release_pollfd();
        self.conn.ctl.release_slot(self.conn.slot);
        watch::unregister(&self.conn);
        Ok(())
    }
}
