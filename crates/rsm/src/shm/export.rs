//! An exported segment on `shm`: the memory stays at its address for the whole life of
//! the export; publishing makes it shared in place, unpublishing private again.
//!
//! * Not published: the memory is private (library memory: an anonymous mapping between
//!   two `PROT_NONE` guard pages; caller memory: whatever the caller had).
//! * `publish`: the contents are copied into a new unnamed data file and that file is
//!   mapped `MAP_FIXED | MAP_SHARED` over the same range, so `as_ptr()` is unchanged and
//!   is now the memory importers map; then the segment's name is bound
//!   ([`super::serve`]).
//! * `unpublish`: the control block's state becomes "withdrawn" (importers check it
//!   before and after every access and abort), waiters are woken, the range gets a
//!   private copy of its contents (`mremap` over it in one step), and the files are
//!   closed (the name first). From then on an importer still holding the old data
//!   file writes into a file nobody else sees: nothing reaches this memory.
//! * `rebind`: the new memory's contents go into the data file and the file is mapped
//!   over the new range; the old range is freed (library memory) or made private.
//!
//! Other threads may write the range (the segment, or its pages' other bytes: a
//! malloc'd buffer's neighbours) while publish, unpublish or rebind switches it: the
//! switch makes it read-only first and such writes wait for the new mapping
//! (`super::hold`); none is lost. This module must never hand out the data file's
//! mapping for memory it does not own.

use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use myrix_rsm_proto::{AccessEntry, Acl, Credentials, NodeId, Perm, RsmError, SegmentId};

use super::ctl::{Ctl, Owner, CTL_BYTES};
use super::mem;
use super::registry::{self as reg, DirLock};
use super::serve;
use crate::backend::ExportBackend;
use crate::export::SignalSender;
use crate::SignalFlags;

struct Published {
    id: SegmentId,
    ctl: Arc<Ctl>,
    /// The files (the control block's descriptor holds the exclusive lock that says
    /// "alive") and the access list, shared with the serving thread.
    entry: Arc<serve::Entry>,
    /// The segment's name; dropped first when it is withdrawn.
    listing: serve::Listing,
}

struct State {
    /// The segment's memory in this process (an address: the struct stays `Send`).
    ptr: usize,
    /// Whether the memory is the library's (freed with its guards) or the caller's.
    owned: bool,
    publ: Option<Published>,
    destroyed: bool,
}

pub(crate) struct ShmExport {
    dir: PathBuf,
    node: NodeId,
    len: usize,
    /// `State::ptr`, readable without the lock: an exporter polling a flag in its own
    /// memory reads it on every poll. Written only with the lock held.
    ptr: AtomicUsize,
    st: Mutex<State>,
}

impl ShmExport {
    pub(crate) fn new(
        dir: PathBuf,
        node: NodeId,
        ptr: *mut u8,
        len: usize,
        owned: bool,
    ) -> ShmExport {
        ShmExport {
            dir,
            node,
            len,
            ptr: AtomicUsize::new(ptr as usize),
            st: Mutex::new(State {
                ptr: ptr as usize,
                owned,
                publ: None,
                destroyed: false,
            }),
        }
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>, RsmError> {
        let st = self.st.lock().unwrap_or_else(|p| p.into_inner());
        if st.destroyed {
            return Err(RsmError::BadSegHndl);
        }
        Ok(st)
    }

    fn me(&self) -> SignalSender {
        SignalSender {
            node: self.node,
            pid: mem::whoami().2,
        }
    }

    /// Makes segment `id`'s unnamed files, shares the memory and binds the name
    /// ([`super::serve`]); the directory lock is held.
    fn create_entry(&self, st: &State, id: SegmentId, acl: &Acl) -> Result<Published, RsmError> {
        let d = &self.dir;
        let (seg_mode, ctl_mode) = reg::modes(acl, self.node);
        let seg_file = serve::unnamed_file(d)?;
        seg_file
            .set_len(self.len as u64)
            .map_err(|e| mem::mem_error(&e))?;
        let _ = seg_file.set_permissions(std::fs::Permissions::from_mode(seg_mode));
        let ctl_file = serve::unnamed_file(d)?;
        mem::lock_exclusive(&ctl_file).map_err(|e| mem::mem_error(&e))?;
        ctl_file
            .set_len(CTL_BYTES as u64)
            .map_err(|e| mem::mem_error(&e))?;
        let _ = ctl_file.set_permissions(std::fs::Permissions::from_mode(ctl_mode));
        let ctl = Arc::new(Ctl::open(&ctl_file)?);
        let sig = mem::eventfd().map_err(|e| mem::mem_error(&e))?;
        let (uid, gid, pid) = mem::whoami();
        let ino = seg_file.metadata().map_err(|e| mem::mem_error(&e))?.ino();
        ctl.init(&Owner {
            pid,
            uid,
            gid,
            node: self.node,
            len: self.len as u64,
            ino,
        });
        // SAFETY: the export's memory, page-aligned, ours (library memory) or
        // promised by the caller of export_create_at / rebind; the file is `len`
        // bytes long.
        #[allow(unsafe_code)]
        unsafe {
            mem::share_in_place(&seg_file, st.ptr as *mut u8, self.len)?
        };
        let entry = Arc::new(serve::Entry {
            ctl: ctl_file,
            seg: seg_file,
            acl: Mutex::new(acl.clone()),
            owner: Credentials { uid, gid },
            ctl_map: ctl.clone(),
            sig,
            importers: Mutex::new(std::collections::HashMap::new()),
        });
        let listing = match serve::publish(d, id, entry.clone()) {
            Ok(l) => l,
            Err(e) => {
                // SAFETY: as above: the same range, back to private.
                #[allow(unsafe_code)]
                let _ = unsafe { mem::unshare_in_place(st.ptr as *mut u8, self.len) };
                return Err(e);
            }
        };
        Ok(Published {
            id,
            ctl,
            entry,
            listing,
        })
    }

    fn withdraw(&self, st: &mut State) -> Result<(), RsmError> {
        let p = st.publ.take().ok_or(RsmError::SegNotPublished)?;
        // No new importer from now on: the name is gone.
        let Published {
            id,
            ctl,
            entry,
            listing,
        } = p;
        drop(listing);
        ctl.state()
            .store(super::ctl::WITHDRAWN, std::sync::atomic::Ordering::Release);
        ctl.wake_all();
        // SAFETY: the export's own range, currently the data file's mapping.
        #[allow(unsafe_code)]
        let r = unsafe { mem::unshare_in_place(st.ptr as *mut u8, self.len) };
        // Nothing of it is named now; an older version's leftovers under its id go.
        if let Ok(_lock) = DirLock::take(&self.dir) {
            reg::remove_all(&self.dir, id);
        }
        drop((ctl, entry));
        r
    }
}

impl ExportBackend for ShmExport {
    fn len(&self) -> usize {
        self.len
    }

    fn as_ptr(&self) -> *mut u8 {
        self.ptr.load(Ordering::Acquire) as *mut u8
    }

    fn id(&self) -> Option<SegmentId> {
        self.lock().ok()?.publ.as_ref().map(|p| p.id)
    }

    fn publish(
        &self,
        id: Option<SegmentId>,
        acl: &[AccessEntry],
        open_mode: Perm,
    ) -> Result<SegmentId, RsmError> {
        let acl = Acl::new(acl, open_mode)?;
        let mut st = self.lock()?;
        if st.publ.is_some() {
            return Err(RsmError::SegAlreadyPublished);
        }
        reg::ensure_dir(&self.dir)?;
        let _lock = DirLock::take(&self.dir)?;
        let (id, p) = match id {
            Some(id) => {
                if reg::reap(&self.dir, id) {
                    return Err(RsmError::SegidInUse);
                }
                (id, self.create_entry(&st, id, &acl)?)
            }
            None => {
                let mut made = Err(RsmError::InsufficientResources);
                for _ in 0..64 {
                    let id = SegmentId((crate::random_u64() as u32) | SegmentId::USER_BASE);
                    if reg::reap(&self.dir, id) {
                        continue;
                    }
                    match self.create_entry(&st, id, &acl) {
                        // The name free a moment ago is held: a child forked by another
                        // thread may still hold the probe's socket until its exec.
                        Err(RsmError::SegidInUse) => continue,
                        r => {
                            made = r.map(|p| (id, p));
                            break;
                        }
                    }
                }
                made?
            }
        };
        st.publ = Some(p);
        Ok(id)
    }

    fn republish(&self, acl: &[AccessEntry], open_mode: Perm) -> Result<(), RsmError> {
        let acl = Acl::new(acl, open_mode)?;
        let st = self.lock()?;
        let p = st.publ.as_ref().ok_or(RsmError::SegNotPublished)?;
        let (seg_mode, ctl_mode) = reg::modes(&acl, self.node);
        let e = &p.entry;
        let _ = e
            .seg
            .set_permissions(std::fs::Permissions::from_mode(seg_mode));
        let _ = e
            .ctl
            .set_permissions(std::fs::Permissions::from_mode(ctl_mode));
        *e.acl.lock().unwrap_or_else(|p| p.into_inner()) = acl;
        Ok(())
    }

    fn unpublish(&self) -> Result<(), RsmError> {
        let mut st = self.lock()?;
        self.withdraw(&mut st)
    }

    #[allow(unsafe_code)]
    unsafe fn rebind(&self, ptr: *mut u8, offset: usize, len: usize) -> Result<(), RsmError> {
        if offset != 0 {
            return Err(RsmError::BadOffset);
        }
        if len != self.len {
            return Err(RsmError::BadLength);
        }
        if (ptr as usize) % mem::page_size() != 0 {
            return Err(RsmError::BadMemAlignment);
        }
        if !mem::is_mapped(ptr, len) {
            return Err(RsmError::BadAddr);
        }
        let mut st = self.lock()?;
        if st.ptr == ptr as usize {
            return Ok(());
        }
        let old = st.ptr as *mut u8;
        if let Some(p) = &st.publ {
            // SAFETY: the caller's promise for the new range; the file is `len` long.
            unsafe { mem::share_in_place(&p.entry.seg, ptr, len)? };
            if !st.owned {
                // SAFETY: the old range is the caller's, still mapped (its promise).
                let _ = unsafe { mem::unshare_in_place(old, len) };
            }
        }
        if st.owned {
            // SAFETY: library memory from alloc_guarded, no longer used by the export.
            unsafe { mem::free_guarded(old, len) };
        }
        st.ptr = ptr as usize;
        self.ptr.store(ptr as usize, Ordering::Release);
        st.owned = false;
        Ok(())
    }

    fn signal_post(&self, flags: SignalFlags) -> Result<(), RsmError> {
        let (ctl, entry) = {
            let st = self.lock()?;
            let p = st.publ.as_ref().ok_or(RsmError::SegNotPublished)?;
            (p.ctl.clone(), p.entry.clone())
        };
        let me = self.me();
        let sigs = entry.importers.lock().unwrap_or_else(|p| p.into_inner());
        for k in ctl.claimed().collect::<Vec<_>>() {
            if ctl.mailbox(Some(k)).post(me, flags.no_accumulate) {
                if let Some(f) = sigs.get(&k) {
                    mem::poke(f);
                }
            }
        }
        Ok(())
    }

    fn signal_wait(&self, timeout: Option<Duration>) -> Result<SignalSender, RsmError> {
        let (ctl, entry) = {
            let st = self.lock()?;
            let p = st.publ.as_ref().ok_or(RsmError::SegNotPublished)?;
            (p.ctl.clone(), p.entry.clone())
        };
        let alive = || {
            if ctl.live() {
                Ok(())
            } else {
                Err(RsmError::SegNotPublished)
            }
        };
        let mb = ctl.mailbox(None);
        let polled = (mb.armed.load(Ordering::Acquire) != 0).then_some(&entry.sig);
        mb.wait(timeout, polled, alive)
    }

    fn pollfd(&self) -> Result<RawFd, RsmError> {
        let st = self.lock()?;
        let p = st.publ.as_ref().ok_or(RsmError::SegNotPublished)?;
        let mb = p.ctl.mailbox(None);
        mb.armed.store(1, Ordering::SeqCst);
        if mb.pending.load(Ordering::SeqCst) > 0 {
            mem::poke(&p.entry.sig);
        }
        Ok(p.entry.sig.as_raw_fd())
    }

    fn release_pollfd(&self) -> Result<(), RsmError> {
        let st = self.lock()?;
        let p = st.publ.as_ref().ok_or(RsmError::SegNotPublished)?;
        p.ctl.mailbox(None).armed.store(0, Ordering::SeqCst);
        mem::drain(&p.entry.sig);
        Ok(())
    }

    fn destroy(&self) -> Result<(), RsmError> {
        let mut st = self.lock()?;
        let r = if st.publ.is_some() {
            self.withdraw(&mut st)
        } else {
            Ok(())
        };
        if st.owned {
            // SAFETY: library memory from alloc_guarded; the export is going away and
            // `destroyed` stops every later use.
            #[allow(unsafe_code)]
            unsafe {
                mem::free_guarded(st.ptr as *mut u8, self.len)
            };
        }
        st.destroyed = true;
        r
    }
}
