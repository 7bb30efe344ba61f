//! Several RSM frames to one peer in one datagram: what the network controllers put on
//! the wire when the engine has more than one frame for the same peer at once (a write
//! and its flush, a flush reply and an ack), so they cost one send and one receive.
//!
//! ```text
//!  0      1      2             4
//! +------+------+-------------+--------------------+-------------+--------------
//! | 0x52 | 0x80 | length (16) | first RSM frame    | length (16) | next frame ...
//! +------+------+-------------+--------------------+-------------+--------------
//! ```
//!
//! Lengths are big-endian; every inner frame is a whole `wire::rsm` frame (its own tag
//! first). A datagram with one small frame is sent as that frame alone; a frame of more
//! than half the MTU (a piece of a bulk put) is sent as a bundle of one, as it was
//! written, rather than moved (copied again) to the datagram's start. Kind `0x80` is no
//! `wire::rsm` kind, so a receiver that does not know bundles drops them as unknown.
//! The frames of a bundle are handed to the engine in order, as if they had arrived one
//! after the other. Only bytes here: no protocol state.

use myrix_wire::protocol::RSM;

/// The kind byte of a bundle.
pub(crate) const BUNDLE: u8 = 0x80;
/// Bytes before the first frame's data (tag, kind, its length).
pub(crate) const HEAD: usize = 4;
/// Bytes before every later frame (its length).
pub(crate) const SUB_HEAD: usize = 2;

/// Whether `d` is a bundle (else it is one RSM frame).
pub(crate) fn is_bundle(d: &[u8]) -> bool {
    d.len() >= 2 && d[0] == RSM && d[1] == BUNDLE
}

/// Writes the bundle head for a first frame of `n` bytes already at `buf[HEAD..]`.
pub(crate) fn start(buf: &mut [u8], n: usize) {
    buf[0] = RSM;
    buf[1] = BUNDLE;
    buf[2..HEAD].copy_from_slice(&(n as u16).to_be_bytes());
}

/// Appends `frame` at `buf[end..]`; returns the new end, or `None` (nothing written)
/// if it does not fit before `limit`.
pub(crate) fn push(buf: &mut [u8], end: usize, limit: usize, frame: &[u8]) -> Option<usize> {
    let n = u16::try_from(frame.len()).ok()?;
    let new_end = end.checked_add(SUB_HEAD + frame.len())?;
    if new_end > limit.min(buf.len()) {
        return None;
    }
    buf[end..end + SUB_HEAD].copy_from_slice(&n.to_be_bytes());
    buf[end + SUB_HEAD..new_end].copy_from_slice(frame);
    Some(new_end)
}

/// The frames of bundle `d`, in order. A malformed one (a length past the end, an empty
/// frame) ends the walk: what came before it is kept, as the engine would keep frames
/// that arrived before a corrupt datagram.
pub(crate) fn frames(d: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut at = if is_bundle(d) { 2 } else { d.len() };
    std::iter::from_fn(move || {
        let len = d.get(at..at + SUB_HEAD)?;
        let n = usize::from(u16::from_be_bytes([len[0], len[1]]));
        let f = d
            .get(at + SUB_HEAD..at + SUB_HEAD + n)
            .filter(|f| !f.is_empty())?;
        at += SUB_HEAD + n;
        Some(f)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_back_in_order() {
        let mut buf = vec![0u8; 64];
        let a = [RSM, 4, 1, 2, 3];
        buf[HEAD..HEAD + a.len()].copy_from_slice(&a);
        start(&mut buf, a.len());
        let end = push(&mut buf, HEAD + a.len(), 64, &[RSM, 7, 9]).unwrap();
        let end = push(&mut buf, end, 64, &[RSM, 12]).unwrap();
        let got: Vec<&[u8]> = frames(&buf[..end]).collect();
        assert_eq!(got, vec![&a[..], &[RSM, 7, 9][..], &[RSM, 12][..]]);
        assert!(is_bundle(&buf[..end]));
        assert!(!is_bundle(&a));
    }

    #[test]
    fn a_frame_that_does_not_fit_is_not_written() {
        let mut buf = vec![0u8; 16];
        assert_eq!(push(&mut buf, 10, 16, &[1, 2, 3, 4, 5]), None);
        assert_eq!(buf, vec![0u8; 16]);
        assert_eq!(push(&mut buf, 10, 16, &[1, 2, 3, 4]), Some(16));
        assert_eq!(
            push(&mut buf, 10, 12, &[1]),
            None,
            "the limit, not the buffer"
        );
    }

    #[test]
    fn malformed_bundles_never_panic_and_keep_what_came_first() {
        // Truncated lengths, lengths past the end, empty frames, every prefix.
        let mut buf = vec![0u8; 32];
        buf[HEAD..HEAD + 3].copy_from_slice(&[RSM, 4, 1]);
        start(&mut buf, 3);
        let end = push(&mut buf, HEAD + 3, 32, &[RSM, 12]).unwrap();
        for cut in 0..=end {
            let n = frames(&buf[..cut]).count();
            assert!(n <= 2);
            if cut == end {
                assert_eq!(n, 2);
            }
        }
        let lying = [RSM, BUNDLE, 0xff, 0xff, RSM];
        assert_eq!(frames(&lying).count(), 0);
        let empty = [RSM, BUNDLE, 0, 0, 0, 1, RSM];
        assert_eq!(frames(&empty).count(), 0, "an empty frame ends the walk");
        assert_eq!(frames(&[]).count(), 0);
        assert_eq!(frames(&[RSM, 4, 0, 0]).count(), 0, "not a bundle");
    }
}
