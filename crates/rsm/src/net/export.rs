//! The exporting end over the network: a segment's memory, published in the engine
//! under an id; the engine serves importers' accesses to it (from the agent thread or
//! from any waiting call of this process), never the application.

use std::os::fd::RawFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use myrix_rsm_proto::engine::SignalTarget;
use myrix_rsm_proto::{AccessEntry, Acl, Perm, RsmError, SegmentId};

use super::agent::{lock, take_signal};
use super::memory::Range;
use super::signal::Mailbox;
use super::Net;
use crate::backend::ExportBackend;
use crate::export::SignalSender;
use crate::{ExportFlags, SignalFlags};

struct State {
    ptr: usize,
    len: usize,
    /// Library memory (freed on rebind and destroy) rather than the caller's.
    owned: bool,
    id: Option<SegmentId>,
    destroyed: bool,
}

pub(crate) struct NetExport {
    net: Arc<Net>,
    st: Mutex<State>,
    mailbox: Arc<Mailbox>,
}

impl NetExport {
    pub(crate) fn new(
        net: Arc<Net>,
        ptr: *mut u8,
        len: usize,
        owned: bool,
        _flags: ExportFlags,
    ) -> Result<NetExport, RsmError> {
        let mailbox = match Mailbox::new() {
            Ok(m) => Arc::new(m),
            Err(e) => {
                if owned {
                    // SAFETY: fresh library memory nobody else has seen.
                    #[allow(unsafe_code)]
                    unsafe {
                        crate::shm::mem::free_guarded(ptr, len)
                    };
                }
                return Err(e);
            }
        };
        Ok(NetExport {
            net,
            st: Mutex::new(State {
                ptr: ptr as usize,
                len,
                owned,
                id: None,
                destroyed: false,
            }),
            mailbox,
        })
    }

    /// Withdraws the segment from the engine (importers are sent an abort) and from the
    /// memory table, under the core lock: no access reaches the memory after this.
    fn withdraw(&self, st: &mut State) -> Result<(), RsmError> {
        let id = st.id.take().ok_or(RsmError::SegNotPublished)?;
        for r in &self.net.rails {
            let mut c = lock(&r.core);
            let _ = c.engine.unpublish(id);
            c.mem.unbind(id);
            c.mailboxes.remove(&SignalTarget::Export(id));
        }
        // Send the aborts now.
        self.net.progress();
        Ok(())
    }
}

impl ExportBackend for NetExport {
    fn len(&self) -> usize {
        lock(&self.st).len
    }

    fn as_ptr(&self) -> *mut u8 {
        lock(&self.st).ptr as *mut u8
    }

    fn id(&self) -> Option<SegmentId> {
        lock(&self.st).id
    }

    fn publish(
        &self,
        id: Option<SegmentId>,
        acl: &[AccessEntry],
        open_mode: Perm,
    ) -> Result<SegmentId, RsmError> {
        let acl = Acl::new(acl, open_mode)?;
        let mut st = lock(&self.st);
        if st.id.is_some() {
            return Err(RsmError::SegAlreadyPublished);
        }
        // Every rail's engine publishes it under the same id.
        let mut cores: Vec<_> = self.net.rails.iter().map(|r| lock(&r.core)).collect();
        let try_all =
            |cores: &mut Vec<super::agent::CoreGuard<'_>>, id: SegmentId| -> Result<(), RsmError> {
                for k in 0..cores.len() {
                    if let Err(e) = cores[k].engine.publish(id, acl.clone(), self.net.who) {
                        for c in cores.iter_mut().take(k) {
                            let _ = c.engine.unpublish(id);
                        }
                        return Err(e);
                    }
                }
                Ok(())
            };
        let id = match id {
            Some(id) => {
                try_all(&mut cores, id)?;
                id
            }
            None => {
                let mut got = None;
                for _ in 0..64 {
                    let id = SegmentId((crate::random_u64() as u32) | SegmentId::USER_BASE);
                    match try_all(&mut cores, id) {
                        Ok(()) => {
                            got = Some(id);
                            break;
                        }
                        Err(RsmError::SegidInUse) => continue,
                        Err(e) => return Err(e),
                    }
                }
                got.ok_or(RsmError::InsufficientResources)?
            }
        };
        for c in cores.iter_mut() {
            c.mem.bind(
                id,
                Range {
                    ptr: st.ptr,
                    len: st.len,
                },
            );
            c.mailboxes
                .insert(SignalTarget::Export(id), self.mailbox.clone());
        }
        drop(cores);
        st.id = Some(id);
        Ok(id)
    }

    fn republish(&self, acl: &[AccessEntry], open_mode: Perm) -> Result<(), RsmError> {
        let acl = Acl::new(acl, open_mode)?;
        let st = lock(&self.st);
        let id = st.id.ok_or(RsmError::SegNotPublished)?;
        for r in &self.net.rails {
            lock(&r.core).engine.republish(id, acl.clone())?;
        }
        Ok(())
    }

    fn unpublish(&self) -> Result<(), RsmError> {
        let mut st = lock(&self.st);
        self.withdraw(&mut st)
    }

    #[allow(unsafe_code)]
    unsafe fn rebind(&self, ptr: *mut u8, offset: usize, len: usize) -> Result<(), RsmError> {
        let mut st = lock(&self.st);
        if offset != 0 {
            return Err(RsmError::BadOffset);
        }
        if len != st.len {
            return Err(RsmError::BadLength);
        }
        if (ptr as usize) % self.net.page != 0 {
            return Err(RsmError::BadMemAlignment);
        }
        if !crate::shm::mem::is_mapped(ptr, len) {
            return Err(RsmError::BadAddr);
        }
        if st.ptr == ptr as usize {
            return Ok(());
        }
        let old = st.ptr as *mut u8;
        if let Some(id) = st.id {
            // Swapped under each core's lock: the engines' next accesses use the new
            // memory.
            for r in &self.net.rails {
                lock(&r.core).mem.bind(
                    id,
                    Range {
                        ptr: ptr as usize,
                        len,
                    },
                );
            }
        }
        if st.owned {
            // SAFETY: library memory from alloc_guarded; the engine no longer reaches it
            // (replaced in the table above, under its lock).
            unsafe { crate::shm::mem::free_guarded(old, len) };
        }
        st.ptr = ptr as usize;
        st.owned = false;
        Ok(())
    }

    fn signal_post(&self, flags: SignalFlags) -> Result<(), RsmError> {
        let id = lock(&self.st).id.ok_or(RsmError::SegNotPublished)?;
        // An importer receives signals on its primary rail only (its other rails'
        // connections have no mailbox), so every rail sends.
        for r in &self.net.rails {
            lock(&r.core)
                .engine
                .signal_importers(id, flags.no_accumulate)?;
        }
        self.net.progress();
        Ok(())
    }

    fn signal_wait(&self, timeout: Option<Duration>) -> Result<SignalSender, RsmError> {
        let target = lock(&self.st).id.map(SignalTarget::Export);
        let from = match target {
            // Not published: nothing can arrive; wait out the timeout.
            None => {
                if let Some(t) = timeout {
                    std::thread::sleep(t);
                }
                return Err(RsmError::Timeout);
            }
            Some(_) => self
                .net
                .wait_with(timeout, || take_signal(&self.net, &self.mailbox)),
        };
        from.map(|node| SignalSender { node, pid: 0 })
            .ok_or(RsmError::Timeout)
    }

    fn pollfd(&self) -> Result<RawFd, RsmError> {
        Ok(self.mailbox.fd())
    }

    fn release_pollfd(&self) -> Result<(), RsmError> {
        Ok(())
    }

    fn poll(&self) {
        self.net.try_progress();
    }

    fn destroy(&self) -> Result<(), RsmError> {
        let mut st = lock(&self.st);
        if st.destroyed {
            return Ok(());
        }
        if st.id.is_some() {
            self.withdraw(&mut st)?;
        }
        st.destroyed = true;
        if st.owned {
            // SAFETY: library memory from alloc_guarded, no longer in the engine's table
            // (withdrawn above) and never handed out again.
            #[allow(unsafe_code)]
            unsafe {
                crate::shm::mem::free_guarded(st.ptr as *mut u8, st.len)
            };
            st.owned = false;
        }
        Ok(())
    }
}

impl Drop for NetExport {
    fn drop(&mut self) {
        let _ = self.destroy();
    }
}
