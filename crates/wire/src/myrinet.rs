//! The Myrinet packet (Boden et al. 1995, figure 4).
//!
//! ```text
//! +--------------------+-------+-----------------------+-------+
//! | route bytes, 0..n  | type  | payload, any length   | CRC-8 |
//! | 1ppppppp each      | 0ttttttt                      |       |
//! +--------------------+-------+-----------------------+-------+
//! ```
//!
//! * A **route byte** has its most-significant bit set (a *to-switch* byte); its low seven
//!   bits name the switch output port. Each switch reads the leading byte, strips it and
//!   forwards the rest. A switch that finds a *to-host* byte (MSB clear) in front drops
//!   the packet: this is what lets the mapper probe safely.
//! * The **type** byte is the first to-host byte: what the host interface sees first.
//! * The **CRC-8 trailer** covers every byte before it. Because a switch changes the
//!   packet, the CRC is recomputed on every link, and in a way that keeps an error: the
//!   switch sends `crc(out) ^ (trailer_in ^ crc(in))`, so an incoming packet whose CRC is
//!   wrong leaves with a CRC wrong in the same bits, and the destination sees any error
//!   made on any link of the path (see [`forward`]).
//!
//! The paper does not give the CRC polynomial. We use x⁸ + x² + x + 1 (0x07, the ATM HEC
//! and SMBus polynomial) with zero initial value and no final XOR, [`CRC8`]: its (x + 1)
//! factor catches every odd number of bit errors, it catches every burst of up to 8 bits,
//! and with zero init and no final XOR the CRC is linear in the data, which is exactly
//! what makes the per-switch recomputation carry an error's syndrome unchanged.

use core::fmt;

/// The CRC of the Myrinet trailer: CRC-8, polynomial 0x07, init 0, no reflection, no
/// final XOR (catalogued as CRC-8/SMBUS).
pub const CRC8: crc::Algorithm<u8> = crc::CRC_8_SMBUS;

const CRC: crc::Crc<u8> = crc::Crc::<u8>::new(&CRC8);

/// Set on route (to-switch) bytes.
pub const TO_SWITCH: u8 = 0x80;

/// The highest port a route byte can name.
pub const MAX_PORT: u8 = 0x7f;

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Shorter than a type byte and a trailer.
    #[error("packet truncated: {0} bytes, need at least 2")]
    Truncated(usize),
    /// Every byte before the trailer is a route byte: no type byte.
    #[error("no to-host type byte before the trailer")]
    NoType,
    /// The trailer does not match the bytes before it.
    #[error("CRC mismatch: trailer {trailer:#04x}, computed {computed:#04x}")]
    Crc { trailer: u8, computed: u8 },
    /// A switch found a to-host byte where a route byte belongs.
    #[error("to-host byte {0:#04x} at a switch")]
    ToHostAtSwitch(u8),
    /// A port number that does not fit in a route byte.
    #[error("port {0} does not fit in a route byte (max {MAX_PORT})")]
    BadPort(u8),
    /// A packet type that does not fit in a to-host byte.
    #[error("packet type {0:#04x} has its to-switch bit set")]
    BadType(u8),
    /// The buffer given to `emit` is too short.
    #[error("buffer too short: {have} bytes, need {need}")]
    Buffer { have: usize, need: usize },
}

/// What the host interface does with a packet (the to-host byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketType {
    /// Network mapping (probes and replies).
    Mapping,
    /// Network management (map distribution, monitoring).
    Management,
    /// An IP packet as payload, no adaptation layer.
    Ip,
    /// Data of a lightweight user-level protocol (MX, the Myrinet API).
    Data,
    Other(u8),
}

impl PacketType {
    pub const fn to_byte(self) -> u8 {
        match self {
            PacketType::Mapping => 0x01,
            PacketType::Management => 0x02,
            PacketType::Ip => 0x03,
            PacketType::Data => 0x04,
            PacketType::Other(b) => b,
        }
    }
    pub const fn from_byte(b: u8) -> PacketType {
        match b {
            0x01 => PacketType::Mapping,
            0x02 => PacketType::Management,
            0x03 => PacketType::Ip,
            0x04 => PacketType::Data,
            b => PacketType::Other(b),
        }
    }
}

impl fmt::Display for PacketType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PacketType::Mapping => f.write_str("mapping"),
            PacketType::Management => f.write_str("management"),
            PacketType::Ip => f.write_str("ip"),
            PacketType::Data => f.write_str("data"),
            PacketType::Other(b) => write!(f, "{b:#04x}"),
        }
    }
}

/// The route byte that sends a packet out of switch port `port`.
pub const fn route_byte(port: u8) -> Result<u8, Error> {
    if port > MAX_PORT {
        Err(Error::BadPort(port))
    } else {
        Ok(TO_SWITCH | port)
    }
}

/// CRC-8 of `bytes` with [`CRC8`].
pub fn crc8(bytes: &[u8]) -> u8 {
    CRC.checksum(bytes)
}

/// A read/write view of a Myrinet packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
    /// Index of the type byte = number of route bytes.
    type_at: usize,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer after checking it holds a type byte and a trailer.
    pub fn new_checked(buffer: T) -> Result<Packet<T>, Error> {
        let b = buffer.as_ref();
        if b.len() < 2 {
            return Err(Error::Truncated(b.len()));
        }
        let type_at = b[..b.len() - 1]
            .iter()
            .position(|&x| x & TO_SWITCH == 0)
            .ok_or(Error::NoType)?;
        Ok(Packet { buffer, type_at })
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// The route bytes still ahead of the packet (each with its to-switch bit).
    pub fn route(&self) -> &[u8] {
        &self.bytes()[..self.type_at]
    }

    /// The output ports the route bytes name, in order.
    pub fn ports(&self) -> impl Iterator<Item = u8> + '_ {
        self.route().iter().map(|b| b & MAX_PORT)
    }

    pub fn packet_type(&self) -> PacketType {
        PacketType::from_byte(self.bytes()[self.type_at])
    }

    pub fn payload(&self) -> &[u8] {
        let b = self.bytes();
        &b[self.type_at + 1..b.len() - 1]
    }

    /// The trailer byte.
    pub fn crc(&self) -> u8 {
        let b = self.bytes();
        b[b.len() - 1]
    }

    /// The CRC of everything before the trailer.
    pub fn computed_crc(&self) -> u8 {
        let b = self.bytes();
        crc8(&b[..b.len() - 1])
    }

    pub fn verify_crc(&self) -> bool {
        self.crc() == self.computed_crc()
    }

    /// Total length including route bytes and trailer.
    pub fn len(&self) -> usize {
        self.bytes().len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let t = self.type_at;
        let b = self.buffer.as_mut();
        let n = b.len();
        &mut b[t + 1..n - 1]
    }

    /// Writes the trailer for the current contents.
    pub fn fill_crc(&mut self) {
        let c = self.computed_crc();
        let b = self.buffer.as_mut();
        let n = b.len();
        b[n - 1] = c;
    }
}

/// A Myrinet packet in high-level form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketRepr<'a> {
    /// Route bytes (each with the to-switch bit set).
    pub route: &'a [u8],
    pub packet_type: PacketType,
    pub payload: &'a [u8],
}

impl<'a> PacketRepr<'a> {
    /// Reads a checked packet, verifying its CRC.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &'a Packet<&'a T>) -> Result<PacketRepr<'a>, Error> {
        if !p.verify_crc() {
            return Err(Error::Crc {
                trailer: p.crc(),
                computed: p.computed_crc(),
            });
        }
        let b: &'a [u8] = p.buffer.as_ref();
        Ok(PacketRepr {
            route: &b[..p.type_at],
            packet_type: PacketType::from_byte(b[p.type_at]),
            payload: &b[p.type_at + 1..b.len() - 1],
        })
    }

    pub fn buffer_len(&self) -> usize {
        self.route.len() + 1 + self.payload.len() + 1
    }

    /// Writes the packet into the front of `buf`; returns the length written.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, Error> {
        if let Some(&b) = self.route.iter().find(|&&b| b & TO_SWITCH == 0) {
            return Err(Error::BadPort(b));
        }
        let t = self.packet_type.to_byte();
        if t & TO_SWITCH != 0 {
            return Err(Error::BadType(t));
        }
        let n = self.buffer_len();
        if buf.len() < n {
            return Err(Error::Buffer {
                have: buf.len(),
                need: n,
            });
        }
        let r = self.route.len();
        buf[..r].copy_from_slice(self.route);
        buf[r] = t;
        buf[r + 1..n - 1].copy_from_slice(self.payload);
        buf[n - 1] = crc8(&buf[..n - 1]);
        Ok(n)
    }

    /// Emits into a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>, Error> {
        let mut v = vec![0; self.buffer_len()];
        self.emit(&mut v)?;
        Ok(v)
    }
}

/// What a switch does to a packet in `buf[..len]`: reads and strips the leading route
/// byte and rewrites the trailer so that any error already present is kept.
///
/// Returns the output port and the new length (`len - 1`), or why the switch drops the
/// packet. Works on a packet whose CRC is wrong: that is the point.
pub fn forward(buf: &mut [u8], len: usize) -> Result<(u8, usize), Error> {
    let len = len.min(buf.len());
    if len < 2 {
        return Err(Error::Truncated(len));
    }
    let head = buf[0];
    if head & TO_SWITCH == 0 {
        return Err(Error::ToHostAtSwitch(head));
    }
    if len < 3 {
        return Err(Error::NoType);
    }
    let syndrome = buf[len - 1] ^ crc8(&buf[..len - 1]);
    buf.copy_within(1..len - 1, 0);
    let n = len - 1;
    buf[n - 1] = crc8(&buf[..n - 1]) ^ syndrome;
    Ok((head & MAX_PORT, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_forward_and_deliver() {
        let route = [
            route_byte(3).unwrap(),
            route_byte(0).unwrap(),
            route_byte(7).unwrap(),
        ];
        let repr = PacketRepr {
            route: &route,
            packet_type: PacketType::Data,
            payload: b"hello",
        };
        let mut buf = repr.to_vec().unwrap();
        let mut len = buf.len();
        let mut ports = Vec::new();
        while buf[0] & TO_SWITCH != 0 {
            let (p, n) = forward(&mut buf, len).unwrap();
            ports.push(p);
            len = n;
        }
        assert_eq!(ports, [3, 0, 7]);
        let p = Packet::new_checked(&buf[..len]).unwrap();
        let r = PacketRepr::parse(&p).unwrap();
        assert_eq!(
            r,
            PacketRepr {
                route: &[],
                packet_type: PacketType::Data,
                payload: b"hello"
            }
        );
    }

    #[test]
    fn a_switch_drops_a_to_host_byte() {
        let repr = PacketRepr {
            route: &[],
            packet_type: PacketType::Mapping,
            payload: &[1],
        };
        let mut buf = repr.to_vec().unwrap();
        let n = buf.len();
        assert_eq!(forward(&mut buf, n), Err(Error::ToHostAtSwitch(0x01)));
    }

    #[test]
    fn checks() {
        assert_eq!(
            Packet::new_checked(&[0u8][..]).unwrap_err(),
            Error::Truncated(1)
        );
        assert_eq!(
            Packet::new_checked(&[0x81u8, 0x00][..]).unwrap_err(),
            Error::NoType
        );
        assert_eq!(route_byte(128), Err(Error::BadPort(128)));
        let bad = PacketRepr {
            route: &[0x05],
            packet_type: PacketType::Ip,
            payload: &[],
        };
        assert!(bad.to_vec().is_err());
        let bad = PacketRepr {
            route: &[],
            packet_type: PacketType::Other(0x90),
            payload: &[],
        };
        assert_eq!(bad.to_vec(), Err(Error::BadType(0x90)));
        let ok = PacketRepr {
            route: &[],
            packet_type: PacketType::Ip,
            payload: &[9, 9],
        };
        assert_eq!(
            ok.emit(&mut [0u8; 3]),
            Err(Error::Buffer { have: 3, need: 4 })
        );
    }

    #[test]
    fn crc_catalogue_check_value() {
        // CRC-8/SMBUS check value for "123456789".
        assert_eq!(crc8(b"123456789"), 0xf4);
    }
}
