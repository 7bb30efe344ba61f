//! The importing end over the network: an engine import; puts are queued and
//! pipelined (waited for in implicit mode), gets pulled, barrier closes flushed.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use myrix_rsm_proto::engine::{FlushId, Import as EngImport, SignalTarget};
use myrix_rsm_proto::{BarrierMode, NodeId, Perm, RsmError, SegmentId};

use super::agent::lock;
use super::signal::Mailbox;
use super::Net;
use crate::backend::ImportBackend;
use crate::export::SignalSender;
use crate::import::{Scalars, ScalarsMut};
use crate::SignalFlags;

/// A put is queued in pieces of this size, so a huge put never meets the engine's
/// queue limit at once.
const PUT_PIECE: usize = 1 << 20;

pub(crate) struct NetImport {
    net: Arc<Net>,
    imp: EngImport,
    node: NodeId,
    len: usize,
    mailbox: Arc<Mailbox>,
    implicit: AtomicBool,
}

impl NetImport {
    pub(crate) fn connect(
        net: Arc<Net>,
        node: NodeId,
        id: SegmentId,
        perm: Perm,
    ) -> Result<NetImport, RsmError> {
        let addr = net.addr_of(node).ok_or(RsmError::RemoteNodeUnreachable)?;
        let mailbox = Arc::new(Mailbox::new()?);
        let imp = {
            let mut c = lock(&net.core);
            if c.unreachable.remove(&addr) || c.engine.peer_unreachable(&addr) {
                // Declared unreachable before: try afresh (it may have started since).
                c.engine.peer_gone(&addr);
            }
            let who = net.who;
            c.engine.connect(addr, node, id, perm, who)?
        };
        net.progress();
        let len = net
            .wait(None, |c| c.connects.remove(&imp.0))
            .unwrap_or(Err(RsmError::Timeout))?;
        let len = usize::try_from(len).map_err(|_| RsmError::BadLength)?;
        lock(&net.core)
            .mailboxes
            .insert(SignalTarget::Import(imp), mailbox.clone());
        Ok(NetImport {
            net,
            imp,
            node,
            len,
            mailbox,
            implicit: AtomicBool::new(true),
        })
    }

    fn wait_flush(&self, f: FlushId) -> Result<(), RsmError> {
        self.net
            .wait(None, |c| c.flushes.remove(&f.0))
            .unwrap_or(Err(RsmError::Timeout))
    }

    /// Queues `data` at `offset`, piece by piece, driving progress while the engine's
    /// queue is full.
    fn queue_put(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        for (i, piece) in data.chunks(PUT_PIECE).enumerate() {
            let off = (offset + i * PUT_PIECE) as u64;
            loop {
                let r = lock(&self.net.core).engine.put(self.imp, off, piece);
                match r {
                    Err(RsmError::InsufficientResources) => {
                        // The queue is full: let it drain.
                        self.net.progress();
                        std::thread::yield_now();
                    }
                    r => {
                        r?;
                        break;
                    }
                }
            }
            self.net.progress();
        }
        Ok(())
    }

    /// In implicit mode a put is its own barrier: flush and report its result.
    fn after_put(&self) -> Result<(), RsmError> {
        if !self.implicit.load(Ordering::Relaxed) {
            return Ok(());
        }
        let f = lock(&self.net.core).engine.flush(self.imp)?;
        self.net.progress();
        self.wait_flush(f)
    }

    fn get_bytes(&self, offset: usize, out: &mut [u8]) -> Result<(), RsmError> {
        let g = lock(&self.net.core)
            .engine
            .get(self.imp, offset as u64, out.len() as u64)?;
        self.net.progress();
        let data = self
            .net
            .wait(None, |c| c.gets.remove(&g.0))
            .unwrap_or(Err(RsmError::Timeout))?;
        if data.len() != out.len() {
            return Err(RsmError::BarrierFailure);
        }
        out.copy_from_slice(&data);
        Ok(())
    }
}

impl ImportBackend for NetImport {
    fn len(&self) -> usize {
        self.len
    }

    fn put(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        self.queue_put(offset, data)?;
        self.after_put()
    }

    fn get(&self, offset: usize, out: &mut [u8]) -> Result<(), RsmError> {
        self.get_bytes(offset, out)
    }

    fn put_scalars(&self, offset: usize, data: Scalars<'_>) -> Result<(), RsmError> {
        // Write frames are cut at multiples of 8 bytes of the put, so an aligned
        // element never straddles two frames.
        let bytes = to_bytes(&data);
        self.queue_put(offset, &bytes)?;
        self.after_put()
    }

    fn get_scalars(&self, offset: usize, mut out: ScalarsMut<'_>) -> Result<(), RsmError> {
        let mut bytes = vec![0u8; byte_len(&out)];
        self.get_bytes(offset, &mut bytes)?;
        from_bytes(&mut out, &bytes);
        Ok(())
    }

    fn set_mode(&self, mode: BarrierMode) {
        self.implicit
            .store(mode == BarrierMode::Implicit, Ordering::Relaxed);
    }

    fn open_scope(&self) -> Result<u64, RsmError> {
        self.net.progress();
        lock(&self.net.core).engine.open_barrier(self.imp)?;
        Ok(0)
    }

    fn order(&self) -> Result<(), RsmError> {
        // Writes of one import are applied in order.
        Ok(())
    }

    fn close_scope(&self, _token: u64) -> Result<(), RsmError> {
        let f = lock(&self.net.core).engine.close_barrier(self.imp)?;
        self.net.progress();
        self.wait_flush(f)
    }

    fn check(&self) -> Result<(), RsmError> {
        self.net.progress();
        lock(&self.net.core).engine.import_len(self.imp).map(|_| ())
    }

    fn signal_post(&self, flags: SignalFlags) -> Result<(), RsmError> {
        lock(&self.net.core)
            .engine
            .signal(self.imp, flags.no_accumulate)?;
        self.net.progress();
        Ok(())
    }

    fn signal_wait(&self, timeout: Option<Duration>) -> Result<SignalSender, RsmError> {
        let target = SignalTarget::Import(self.imp);
        let r = self.net.wait(timeout, |c| {
            if let Some(n) = c.take_signal(target) {
                return Some(Ok(n));
            }
            c.engine.import_len(self.imp).err().map(Err)
        });
        match r {
            Some(Ok(node)) => Ok(SignalSender { node, pid: 0 }),
            Some(Err(e)) => Err(e),
            None => Err(RsmError::Timeout),
        }
    }

    fn pollfd(&self) -> Result<RawFd, RsmError> {
        Ok(self.mailbox.fd())
    }

    fn release_pollfd(&self) -> Result<(), RsmError> {
        Ok(())
    }

    fn disconnect(&self) -> Result<(), RsmError> {
        {
            let mut c = lock(&self.net.core);
            c.mailboxes.remove(&SignalTarget::Import(self.imp));
            let _ = c.engine.disconnect(self.imp);
        }
        self.net.progress();
        let _ = self.node;
        Ok(())
    }
}

fn to_bytes(s: &Scalars<'_>) -> Vec<u8> {
    match s {
        Scalars::U8(d) => d.to_vec(),
        Scalars::U16(d) => d.iter().flat_map(|v| v.to_ne_bytes()).collect(),
        Scalars::U32(d) => d.iter().flat_map(|v| v.to_ne_bytes()).collect(),
        Scalars::U64(d) => d.iter().flat_map(|v| v.to_ne_bytes()).collect(),
    }
}

fn byte_len(s: &ScalarsMut<'_>) -> usize {
    match s {
        ScalarsMut::U8(d) => d.len(),
        ScalarsMut::U16(d) => d.len() * 2,
        ScalarsMut::U32(d) => d.len() * 4,
        ScalarsMut::U64(d) => d.len() * 8,
    }
}

fn from_bytes(s: &mut ScalarsMut<'_>, b: &[u8]) {
    match s {
        ScalarsMut::U8(d) => d.copy_from_slice(b),
        ScalarsMut::U16(d) => {
            for (v, c) in d.iter_mut().zip(b.chunks_exact(2)) {
                *v = u16::from_ne_bytes([c[0], c[1]]);
            }
        }
        ScalarsMut::U32(d) => {
            for (v, c) in d.iter_mut().zip(b.chunks_exact(4)) {
                *v = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        ScalarsMut::U64(d) => {
            for (v, c) in d.iter_mut().zip(b.chunks_exact(8)) {
                let mut a = [0u8; 8];
                a.copy_from_slice(c);
                *v = u64::from_ne_bytes(a);
            }
        }
    }
}
