//! Whose a frame is: the first byte of every frame a transport carries names the
//! protocol that reads it, so one transport (a UDP socket, a shared-memory ring, an
//! Ethernet interface, a simulated host interface) serves several protocols.
//!
//! MX's tag is its frame format's version byte ([`crate::mx::VERSION`]), so MX frames
//! are unchanged on the wire.

/// MX frames (`wire::mx`).
pub const MX: u8 = crate::mx::VERSION;
/// Remote shared memory frames (`wire::rsm`).
pub const RSM: u8 = 0x52;

/// The tag of a frame: its first byte, `None` for an empty frame.
#[inline(always)]
pub fn tag(frame: &[u8]) -> Option<u8> {
    frame.first().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_distinct_and_read_from_the_first_byte() {
        assert_ne!(MX, RSM);
        assert_eq!(tag(&[]), None);
        assert_eq!(tag(&[RSM, 1, 2]), Some(RSM));
        let mut f = [0u8; crate::mx::HEADER_LEN];
        f[0] = crate::mx::VERSION;
        assert_eq!(tag(&f), Some(MX));
    }
}
