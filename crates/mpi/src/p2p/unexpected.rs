//! Messages announced before a receive matched them, and the pool of eager buffers.
//!
//! An eager, non-synchronous message with no posted receive is taken at once into a
//! pool buffer (`Filling` until the fabric reports it received, then `Full`) and
//! copied out when a receive matches. A rendezvous message, or a synchronous one of
//! any length (taking it would tell its sender "matched" too early), stays `Untaken`
//! until a receive matches, and is then taken straight into the user's buffer. A
//! message removed from matching by `improbe` stays here, out of the queues, until
//! `imrecv`. Must never hand a buffer back to the pool while the fabric may write it.

use super::fabric::{Envelope, MsgToken};

#[derive(Debug)]
pub(crate) enum MsgData {
    Untaken,
    Filling(Vec<u8>),
    Full(Vec<u8>),
    /// Its sender was lost before the data came: a receive of it fails.
    Lost,
}

#[derive(Debug)]
pub(crate) struct Msg {
    pub(crate) token: MsgToken,
    pub(crate) env: Envelope,
    pub(crate) data: MsgData,
    /// In its context's unexpected queue (false once `improbe` took it out).
    pub(crate) queued: bool,
    /// The receive that matched it while its eager data was still `Filling`.
    pub(crate) claimed: Option<u64>,
    /// A retraction its sender asked for while its data was still `Filling` (the
    /// cookie to answer with, `super::cancel`), settled once the data is in.
    pub(crate) retract: Option<u64>,
}

/// Eager buffers for reuse. A buffer given out has exactly the message's length.
pub(crate) struct Pool {
    bufs: Vec<Vec<u8>>,
    /// Capacity of new buffers (the fabric's eager limit), so any eager message fits
    /// any pooled buffer.
    size: usize,
}

/// Buffers kept for reuse at most; more are freed.
const POOL_MAX: usize = 256;

impl Pool {
    pub(crate) fn new(size: usize) -> Self {
        Pool {
            bufs: Vec::new(),
            size,
        }
    }

    pub(crate) fn get(&mut self, len: usize) -> Vec<u8> {
        let mut b = self
            .bufs
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(self.size.max(len)));
        b.clear();
        b.resize(len, 0);
        b
    }

    pub(crate) fn put(&mut self, b: Vec<u8>) {
        if self.bufs.len() < POOL_MAX && b.capacity() >= self.size {
            self.bufs.push(b);
        }
    }

    #[cfg(test)]
    pub(crate) fn pooled(&self) -> usize {
        self.bufs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Pool;

    #[test]
    fn buffers_are_reused() {
        let mut p = Pool::new(64);
        let b = p.get(10);
        assert_eq!(b.len(), 10);
        let ptr = b.as_ptr();
        p.put(b);
        assert_eq!(p.pooled(), 1);
        let c = p.get(64);
        assert_eq!((c.len(), c.as_ptr()), (64, ptr));
    }
}
