//! Where a receive's bytes go and where a send's bytes come from: [`RecvBuf`], the
//! short-copy helper of the fast paths, gathering lent segments, the vector pool.
//!
//! Memory the engine does not own (a C caller's receive buffer) is reached only through
//! [`RecvTarget`], a safe trait: the unsafe implementation over a raw pointer lives in
//! the IO crate (`myrix_mx::raw`), and this crate stays free of `unsafe`. Must never keep
//! a reference to a send's lent memory beyond one call.

use super::*;

/// `dst.copy_from_slice(src)` for the fast paths' messages, which are mostly a few bytes:
/// up to 32 bytes as two overlapping fixed-size moves instead of a call to `memcpy`.
#[inline(always)]
pub(super) fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    assert_eq!(dst.len(), n, "copy_short needs equal lengths");
    if (8..=16).contains(&n) {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..]);
    } else if (17..=32).contains(&n) {
        dst[..16].copy_from_slice(&src[..16]);
        dst[n - 16..].copy_from_slice(&src[n - 16..]);
    } else {
        dst.copy_from_slice(src);
    }
}

/// Memory a receive writes into that the engine does not own: caller memory behind a C
/// ABI (`mx_irecv`), a mapped region. The engine keeps it until the receive completes
/// (and hands it back with the completion) or is cancelled.
pub trait RecvTarget: Send + std::fmt::Debug {
    /// Bytes of room.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copies `data` to `offset`; the engine only calls it with
    /// `offset + data.len() <= self.len()`.
    fn write_at(&mut self, offset: usize, data: &[u8]);
}

/// Where a receive's data goes: one buffer, a scatter list filled in order, or memory
/// the engine does not own. Each buffer's length (not capacity) is the room it offers.
#[derive(Debug)]
pub enum RecvBuf {
    One(Vec<u8>),
    Segments(Vec<Vec<u8>>),
    Target(Box<dyn RecvTarget>),
}

impl PartialEq for RecvBuf {
    /// Vectors compare by contents; a target equals nothing (its bytes are not ours).
    fn eq(&self, other: &RecvBuf) -> bool {
        match (self, other) {
            (RecvBuf::One(a), RecvBuf::One(b)) => a == b,
            (RecvBuf::Segments(a), RecvBuf::Segments(b)) => a == b,
            _ => false,
        }
    }
}

impl RecvBuf {
    /// Bytes of room. Inlined: the receive fast paths ask it of every message.
    #[inline(always)]
    pub fn len(&self) -> usize {
        match self {
            RecvBuf::One(v) => v.len(),
            RecvBuf::Segments(s) => s.iter().map(|v| v.len()).sum(),
            RecvBuf::Target(t) => t.len(),
        }
    }
    /// A receive into memory the engine does not own.
    pub fn target(t: impl RecvTarget + 'static) -> RecvBuf {
        RecvBuf::Target(Box::new(t))
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copies `data` at `offset`, truncating at the end of the buffer.
    #[inline]
    pub(super) fn write_at(&mut self, mut offset: usize, mut data: &[u8]) {
        match self {
            RecvBuf::One(v) => {
                if offset < v.len() {
                    let n = data.len().min(v.len() - offset);
                    copy_short(&mut v[offset..offset + n], &data[..n]);
                }
            }
            RecvBuf::Segments(segs) => {
                for s in segs.iter_mut() {
                    if data.is_empty() {
                        break;
                    }
                    if offset >= s.len() {
                        offset -= s.len();
                        continue;
                    }
                    let n = data.len().min(s.len() - offset);
                    s[offset..offset + n].copy_from_slice(&data[..n]);
                    data = &data[n..];
                    offset = 0;
                }
            }
            RecvBuf::Target(t) => {
                let room = t.len();
                if offset < room {
                    let n = data.len().min(room - offset);
                    t.write_at(offset, &data[..n]);
                }
            }
        }
    }
    /// The bytes as one vector (a copy for segments; empty for a target, whose bytes
    /// are in the owner's memory).
    pub fn to_vec(&self) -> Vec<u8> {
        match self {
            RecvBuf::One(v) => v.clone(),
            RecvBuf::Segments(s) => s.concat(),
            RecvBuf::Target(_) => Vec::new(),
        }
    }
}

/// The lent message of request `h`, if the caller lent it for this call.
pub(super) fn lent_for<'a>(h: u32, lent: Lent<'a>) -> Option<&'a [&'a [u8]]> {
    match lent {
        Some((r, segs)) if r.raw() == h => Some(segs),
        _ => {
            debug_assert!(false, "a lent message's bytes were needed but not lent");
            None
        }
    }
}

/// Replaces `data` with the concatenation of `segs` (`len` bytes in all).
pub(super) fn concat_into(data: &mut Vec<u8>, segs: &[&[u8]], len: usize) {
    data.clear();
    data.reserve(len);
    for s in segs {
        data.extend_from_slice(s);
    }
}

/// Copies `dst.len()` bytes of the concatenation of `segs`, from `offset` on.
pub(super) fn gather(segs: &[&[u8]], mut offset: usize, dst: &mut [u8]) {
    let mut at = 0;
    for s in segs {
        if at == dst.len() {
            break;
        }
        if offset >= s.len() {
            offset -= s.len();
            continue;
        }
        let n = (s.len() - offset).min(dst.len() - at);
        dst[at..at + n].copy_from_slice(&s[offset..offset + n]);
        at += n;
        offset = 0;
    }
}

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    /// Whether a spent buffer goes back to the pool: a few, and not huge, so a burst of
    /// large messages does not pin memory for ever.
    pub(super) fn keep(&self, v: &Vec<u8>) -> bool {
        v.capacity() <= 4 << 20 && self.pool.len() < 16
    }
    /// A send's message is no longer needed: its vector stays with the request slot for
    /// the next send, unless it is huge (a burst of large messages must not pin memory).
    pub(super) fn spend(data: &mut Vec<u8>) {
        if data.capacity() > 4 << 20 {
            *data = Vec::new();
        } else {
            data.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    pub(super) fn copy_short_copies_every_length() {
        let src: Vec<u8> = (1..=70).collect();
        for n in 0..=70 {
            let mut dst = vec![0u8; n];
            super::copy_short(&mut dst, &src[..n]);
            assert_eq!(dst, src[..n], "length {n}");
        }
    }
}
