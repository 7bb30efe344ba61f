//! Opening Open-MX boards (`omx:`, `omx+shm:`, `omx+nic:`) in either of Open-MX's wire
//! modes: [`super::OmxEndpoint`] (the default one) and [`OmxMxWireEndpoint`].

use super::*;
use myrix_wire::codec::omx::OmxCodec;

/// An endpoint speaking Open-MX's frames in its MX-compatible wire mode (the frames of
/// Myricom's native MX over Ethernet: 4 KiB medium fragments, a 4144-byte MTU): Open-MX
/// built with `--enable-mx-wire`. The C interface opens it with `MYRIX_OMX_WIRE=mx`.
pub type OmxMxWireEndpoint = Endpoint<OmxMxWire>;

impl<const MX_WIRE: bool> Endpoint<OmxCodec<MX_WIRE>> {
    /// Opens endpoint `id` on `omx:IFNAME`: raw Ethernet frames in Open-MX's layout
    /// (`myrix_wire::codec::Omx`, or `OmxMxWire` for [`OmxMxWireEndpoint`]); the NIC id
    /// is the interface's MAC address.
    /// `omx+shm:IFNAME` adds the host's shared memory for local peers
    /// ([`crate::transport::omxshm`]): the peer's address picks the path.
    /// `omx+nic:IFNAME` reaches the host's other endpoints on the interface through it
    /// ([`crate::transport::eth`]).
    pub fn open_omx(board: &str, id: u8, key: u32) -> Result<Self, MxError> {
        Self::open_omx_with(board, id, key, Config::default())
    }

    /// As [`OmxEndpoint::open_omx`], with protocol parameters. Mediums are sent in
    /// Open-MX's 8 KiB fragment slots; where the link's MTU is too small for one, a
    /// medium is one frame and longer messages go by rendezvous.
    pub fn open_omx_with(board: &str, id: u8, key: u32, cfg: Config) -> Result<Self, MxError> {
        if !["omx:", "omx+shm:", "omx+nic:"]
            .iter()
            .any(|p| board.starts_with(p))
        {
            return Err(MxError::Board(format!(
                "{board} (an OmxEndpoint opens omx:, omx+shm: or omx+nic:IFNAME)"
            )));
        }
        Self::open_codec(board, id, key, cfg)
    }
}
