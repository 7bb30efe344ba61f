//! pcap capture files: a writer for frames myrix sends and receives, so Wireshark and
//! tcpdump can read them, and a reader for tests.
//!
//! The classic libpcap format (not pcapng) with microsecond timestamps, written by hand:
//! it is a 24-byte file header and a 16-byte header per record, and no small, maintained
//! crate does just that. The writer writes little-endian (what capture hosts write);
//! the reader takes either byte order and nanosecond files too.
//!
//! * Ethernet frames (Open-MX, [`crate::omx`]) go in a [`LINKTYPE_ETHERNET`] file.
//! * Frames of other transports (UDP datagrams, shared-memory slots, simulated Myrinet
//!   packets) go in a [`LINKTYPE_USER0`] file, each record starting with this module's
//!   8-byte [`PseudoHeader`]:
//!
//! ```text
//!  0          1           2                  4                         8
//! +----------+-----------+------------------+-------------------------+--------
//! | transport| direction | header length=8  | frame length            | frame ...
//! +----------+-----------+------------------+-------------------------+--------
//!   u8         u8          u16 big-endian     u32 big-endian
//! ```
//!
//! A reader skips `header length` bytes, so later versions may append fields.
//!
//! Time is the caller's: this module never reads a clock, and never panics on any input.

use std::io::{self, Write};
use std::time::Duration;

/// Ethernet frames, destination MAC first.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Frames behind myrix's [`PseudoHeader`] (the first "user" link type, 147).
pub const LINKTYPE_USER0: u32 = 147;
/// Largest record this module writes or reads.
pub const SNAPLEN: u32 = 256 * 1024;
/// Bytes of the file header.
pub const FILE_HEADER_LEN: usize = 24;
/// Bytes of a record header.
pub const RECORD_HEADER_LEN: usize = 16;
/// Bytes of the pseudo-header this module writes.
pub const PSEUDO_HEADER_LEN: usize = 8;

const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
const VERSION_MAJOR: u16 = 2;
const VERSION_MINOR: u16 = 4;

/// Where each field lies, in bytes from the start of its header.
mod field {
    use core::ops::Range;
    pub mod file {
        use super::Range;
        pub const MAGIC: Range<usize> = 0..4;
        pub const VERSION_MAJOR: Range<usize> = 4..6;
        pub const VERSION_MINOR: Range<usize> = 6..8;
        /// Time zone offset and timestamp accuracy: always 0.
        pub const THISZONE: Range<usize> = 8..12;
        pub const SIGFIGS: Range<usize> = 12..16;
        pub const SNAPLEN: Range<usize> = 16..20;
        pub const LINKTYPE: Range<usize> = 20..24;
    }
    pub mod record {
        use super::Range;
        pub const TS_SEC: Range<usize> = 0..4;
        pub const TS_FRAC: Range<usize> = 4..8;
        /// Bytes stored in the file.
        pub const INCL_LEN: Range<usize> = 8..12;
        /// Bytes the frame had.
        pub const ORIG_LEN: Range<usize> = 12..16;
    }
    pub mod pseudo {
        use super::Range;
        pub const TRANSPORT: usize = 0;
        pub const DIRECTION: usize = 1;
        pub const HEADER_LEN: Range<usize> = 2..4;
        pub const FRAME_LEN: Range<usize> = 4..8;
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("pcap data truncated: {have} bytes, need {need}")]
    Truncated { have: usize, need: usize },
    #[error("not a pcap file: magic {0:#010x}")]
    Magic(u32),
    #[error("pcap version {0}.{1}, expected 2.x")]
    Version(u16, u16),
    #[error("pcap record of {0} bytes is longer than 256 KiB")]
    TooLong(u32),
    #[error("pcap field out of range: {0}")]
    Field(&'static str),
}

/// Which transport carried a frame in a [`LINKTYPE_USER0`] file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Transport {
    /// In-process loopback.
    Loopback = 0,
    /// A UDP datagram's payload.
    Udp = 1,
    /// A shared-memory ring slot.
    Shm = 2,
    /// A simulated Myrinet packet.
    Myrinet = 3,
    /// An Ethernet frame (when mixed with others in one file).
    Ethernet = 4,
}

impl Transport {
    pub fn from_u8(v: u8) -> Option<Transport> {
        Some(match v {
            0 => Transport::Loopback,
            1 => Transport::Udp,
            2 => Transport::Shm,
            3 => Transport::Myrinet,
            4 => Transport::Ethernet,
            _ => return None,
        })
    }
}

/// Whether the capturing side sent or received a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Direction {
    Received = 0,
    Sent = 1,
}

/// What the 8-byte pseudo-header says besides the lengths (which the writer fills).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PseudoHeader {
    pub transport: Transport,
    pub direction: Direction,
}

impl PseudoHeader {
    /// Splits a [`LINKTYPE_USER0`] record into its pseudo-header and its frame. A
    /// frame length past the record (a truncated capture) yields what is there.
    pub fn parse(record: &[u8]) -> Result<(PseudoHeader, &[u8]), Error> {
        use field::pseudo as f;
        if record.len() < PSEUDO_HEADER_LEN {
            return Err(Error::Truncated {
                have: record.len(),
                need: PSEUDO_HEADER_LEN,
            });
        }
        let transport = Transport::from_u8(record[f::TRANSPORT])
            .ok_or(Error::Field("unknown pseudo-header transport"))?;
        let direction = match record[f::DIRECTION] {
            0 => Direction::Received,
            1 => Direction::Sent,
            _ => return Err(Error::Field("unknown pseudo-header direction")),
        };
        let hl = be16(&record[f::HEADER_LEN]) as usize;
        if hl < PSEUDO_HEADER_LEN || hl > record.len() {
            return Err(Error::Field("pseudo-header length"));
        }
        let fl = be32(&record[f::FRAME_LEN]) as usize;
        let frame = &record[hl..];
        let frame = &frame[..frame.len().min(fl)];
        Ok((
            PseudoHeader {
                transport,
                direction,
            },
            frame,
        ))
    }

    fn write(&self, frame_len: u32) -> [u8; PSEUDO_HEADER_LEN] {
        use field::pseudo as f;
        let mut b = [0u8; PSEUDO_HEADER_LEN];
        b[f::TRANSPORT] = self.transport as u8;
        b[f::DIRECTION] = self.direction as u8;
        b[f::HEADER_LEN].copy_from_slice(&(PSEUDO_HEADER_LEN as u16).to_be_bytes());
        b[f::FRAME_LEN].copy_from_slice(&frame_len.to_be_bytes());
        b
    }
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn invalid(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what)
}

/// Writes a pcap file to `W`, one record per call.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    link_type: u32,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header for `link_type` ([`LINKTYPE_ETHERNET`] or
    /// [`LINKTYPE_USER0`], or any other the caller's frames are).
    pub fn new(mut out: W, link_type: u32) -> io::Result<PcapWriter<W>> {
        use field::file as f;
        let mut h = [0u8; FILE_HEADER_LEN];
        h[f::MAGIC].copy_from_slice(&MAGIC_MICROS.to_le_bytes());
        h[f::VERSION_MAJOR].copy_from_slice(&VERSION_MAJOR.to_le_bytes());
        h[f::VERSION_MINOR].copy_from_slice(&VERSION_MINOR.to_le_bytes());
        h[f::THISZONE].fill(0);
        h[f::SIGFIGS].fill(0);
        h[f::SNAPLEN].copy_from_slice(&SNAPLEN.to_le_bytes());
        h[f::LINKTYPE].copy_from_slice(&link_type.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, link_type })
    }

    pub fn link_type(&self) -> u32 {
        self.link_type
    }

    /// Writes one record of `data` at time `ts` (from the Unix epoch, or from any origin
    /// the caller picks), kept to the microsecond. Refuses records longer than
    /// [`SNAPLEN`] and times past 2^32 seconds.
    pub fn write(&mut self, ts: Duration, data: &[u8]) -> io::Result<()> {
        self.record(ts, &[], data)
    }

    /// Writes one record of a [`LINKTYPE_USER0`] file: the pseudo-header, then `frame`.
    pub fn write_pseudo(
        &mut self,
        ts: Duration,
        header: PseudoHeader,
        frame: &[u8],
    ) -> io::Result<()> {
        if self.link_type != LINKTYPE_USER0 {
            return Err(invalid(
                "a pseudo-header record in a file not of LINKTYPE_USER0",
            ));
        }
        let len = u32::try_from(frame.len()).map_err(|_| invalid("pcap record too long"))?;
        self.record(ts, &header.write(len), frame)
    }

    fn record(&mut self, ts: Duration, prefix: &[u8], data: &[u8]) -> io::Result<()> {
        use field::record as f;
        let len = prefix.len() + data.len();
        if len > SNAPLEN as usize {
            return Err(invalid("pcap record longer than 256 KiB"));
        }
        let secs = u32::try_from(ts.as_secs()).map_err(|_| invalid("pcap time past 2^32 s"))?;
        let mut h = [0u8; RECORD_HEADER_LEN];
        h[f::TS_SEC].copy_from_slice(&secs.to_le_bytes());
        h[f::TS_FRAC].copy_from_slice(&ts.subsec_micros().to_le_bytes());
        h[f::INCL_LEN].copy_from_slice(&(len as u32).to_le_bytes());
        h[f::ORIG_LEN].copy_from_slice(&(len as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(prefix)?;
        self.out.write_all(data)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
    pub fn get_ref(&self) -> &W {
        &self.out
    }
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// One record of a pcap file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The file's link type, the same for every record.
    pub link_type: u32,
    pub ts: Duration,
    /// The frame's length when captured (at least `data.len()` in a sane file).
    pub orig_len: u32,
    pub data: Vec<u8>,
}

/// Reads a whole pcap file. Refuses a file header it does not know, a record longer
/// than 256 KiB, a fraction of a second out of range, and trailing partial records.
pub fn read_pcap(bytes: &[u8]) -> Result<Vec<Record>, Error> {
    use field::file as f;
    let head = bytes.get(..FILE_HEADER_LEN).ok_or(Error::Truncated {
        have: bytes.len(),
        need: FILE_HEADER_LEN,
    })?;
    let magic_le = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let magic_be = be32(&head[f::MAGIC]);
    // The byte order is the one that reads the magic right.
    let (le, nanos) = match (magic_le, magic_be) {
        (MAGIC_MICROS, _) => (true, false),
        (MAGIC_NANOS, _) => (true, true),
        (_, MAGIC_MICROS) => (false, false),
        (_, MAGIC_NANOS) => (false, true),
        _ => return Err(Error::Magic(magic_le)),
    };
    let u16_at = |b: &[u8]| {
        let a = [b[0], b[1]];
        if le {
            u16::from_le_bytes(a)
        } else {
            u16::from_be_bytes(a)
        }
    };
    let u32_at = |b: &[u8]| {
        let a = [b[0], b[1], b[2], b[3]];
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let (major, minor) = (
        u16_at(&head[f::VERSION_MAJOR]),
        u16_at(&head[f::VERSION_MINOR]),
    );
    if major != VERSION_MAJOR {
        return Err(Error::Version(major, minor));
    }
    let link_type = u32_at(&head[f::LINKTYPE]);
    let frac_limit = if nanos { 1_000_000_000 } else { 1_000_000 };

    let mut out = Vec::new();
    let mut rest = &bytes[FILE_HEADER_LEN..];
    while !rest.is_empty() {
        use field::record as r;
        let h = rest.get(..RECORD_HEADER_LEN).ok_or(Error::Truncated {
            have: rest.len(),
            need: RECORD_HEADER_LEN,
        })?;
        let secs = u32_at(&h[r::TS_SEC]);
        let frac = u32_at(&h[r::TS_FRAC]);
        let incl = u32_at(&h[r::INCL_LEN]);
        let orig_len = u32_at(&h[r::ORIG_LEN]);
        if frac >= frac_limit {
            return Err(Error::Field("record timestamp fraction of a second"));
        }
        // Checked before any allocation: a hostile length costs nothing.
        if incl > SNAPLEN {
            return Err(Error::TooLong(incl));
        }
        let body = &rest[RECORD_HEADER_LEN..];
        let data = body.get(..incl as usize).ok_or(Error::Truncated {
            have: body.len(),
            need: incl as usize,
        })?;
        let nanos_part = if nanos { frac } else { frac * 1000 };
        out.push(Record {
            link_type,
            ts: Duration::new(secs as u64, nanos_part),
            orig_len,
            data: data.to_vec(),
        });
        rest = &body[incl as usize..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_and_record_layout() {
        let mut w = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET).unwrap();
        w.write(Duration::new(0x0102_0304, 5_006_000), b"abc")
            .unwrap();
        let b = w.into_inner();
        assert_eq!(b.len(), 24 + 16 + 3);
        assert_eq!(&b[0..4], &[0xd4, 0xc3, 0xb2, 0xa1], "little-endian magic");
        assert_eq!(&b[4..8], &[2, 0, 4, 0], "version 2.4");
        assert_eq!(&b[8..16], &[0; 8], "thiszone, sigfigs");
        assert_eq!(&b[16..20], &[0, 0, 4, 0], "snaplen 256 KiB");
        assert_eq!(&b[20..24], &[1, 0, 0, 0], "Ethernet");
        assert_eq!(&b[24..28], &[4, 3, 2, 1], "seconds");
        assert_eq!(&b[28..32], &5006u32.to_le_bytes(), "microseconds");
        assert_eq!(&b[32..36], &[3, 0, 0, 0], "incl_len");
        assert_eq!(&b[36..40], &[3, 0, 0, 0], "orig_len");
        assert_eq!(&b[40..43], b"abc");
        let r = read_pcap(&b).unwrap();
        assert_eq!(
            r,
            vec![Record {
                link_type: 1,
                ts: Duration::new(0x0102_0304, 5_006_000),
                orig_len: 3,
                data: b"abc".to_vec(),
            }]
        );
    }

    #[test]
    fn pseudo_header_layout() {
        let mut w = PcapWriter::new(Vec::new(), LINKTYPE_USER0).unwrap();
        let h = PseudoHeader {
            transport: Transport::Shm,
            direction: Direction::Sent,
        };
        w.write_pseudo(Duration::from_micros(7), h, b"frame")
            .unwrap();
        let b = w.into_inner();
        assert_eq!(&b[20..24], &[147, 0, 0, 0]);
        assert_eq!(
            &b[32..36],
            &[13, 0, 0, 0],
            "incl_len counts the pseudo-header"
        );
        assert_eq!(&b[40..48], &[2, 1, 0, 8, 0, 0, 0, 5]);
        assert_eq!(&b[48..53], b"frame");
        let r = read_pcap(&b).unwrap();
        assert_eq!(PseudoHeader::parse(&r[0].data), Ok((h, &b"frame"[..])));
        // Only a USER0 file takes pseudo-headers.
        let mut e = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET).unwrap();
        assert!(e.write_pseudo(Duration::ZERO, h, b"x").is_err());
        // A longer header is skipped; a bad one refused.
        let mut rec = vec![3, 0, 0, 10, 0, 0, 0, 2, 0xee, 0xee, 9, 9];
        assert_eq!(PseudoHeader::parse(&rec).unwrap().1, &[9, 9]);
        rec[3] = 13;
        assert!(PseudoHeader::parse(&rec).is_err());
        rec[3] = 8;
        rec[0] = 9;
        assert!(PseudoHeader::parse(&rec).is_err());
        assert!(PseudoHeader::parse(&rec[..7]).is_err());
    }

    #[test]
    fn reads_big_endian_and_nanosecond_files() {
        let mut b = Vec::new();
        b.extend_from_slice(&MAGIC_NANOS.to_be_bytes());
        b.extend_from_slice(&[0, 2, 0, 4]);
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&65535u32.to_be_bytes());
        b.extend_from_slice(&147u32.to_be_bytes());
        b.extend_from_slice(&9u32.to_be_bytes());
        b.extend_from_slice(&123_456_789u32.to_be_bytes());
        b.extend_from_slice(&2u32.to_be_bytes());
        b.extend_from_slice(&60u32.to_be_bytes());
        b.extend_from_slice(&[0xaa, 0xbb]);
        let r = read_pcap(&b).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].link_type, 147);
        assert_eq!(r[0].ts, Duration::new(9, 123_456_789));
        assert_eq!((r[0].orig_len, &r[0].data[..]), (60, &[0xaa, 0xbb][..]));
    }

    #[test]
    fn refuses_bad_files() {
        let mut w = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET).unwrap();
        w.write(Duration::ZERO, &[1, 2, 3, 4]).unwrap();
        let b = w.into_inner();
        for n in 0..b.len() {
            if n != 24 {
                assert!(read_pcap(&b[..n]).is_err(), "{n} bytes");
            }
        }
        assert_eq!(read_pcap(&b[..24]), Ok(vec![]));
        let mut x = b.clone();
        x[0] = 0;
        assert!(matches!(read_pcap(&x), Err(Error::Magic(_))));
        let mut x = b.clone();
        x[4] = 3;
        assert_eq!(read_pcap(&x), Err(Error::Version(3, 4)));
        let mut x = b.clone();
        x[32..36].copy_from_slice(&(256 * 1024 + 1u32).to_le_bytes());
        assert_eq!(read_pcap(&x), Err(Error::TooLong(256 * 1024 + 1)));
        let mut x = b.clone();
        x[28..32].copy_from_slice(&1_000_000u32.to_le_bytes());
        assert!(matches!(read_pcap(&x), Err(Error::Field(_))));
        // The writer refuses what the reader would.
        let mut w = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET).unwrap();
        assert!(w.write(Duration::ZERO, &vec![0; 256 * 1024 + 1]).is_err());
        assert!(w.write(Duration::from_secs(1 << 32), b"x").is_err());
        assert!(w.write(Duration::ZERO, &vec![0; 256 * 1024]).is_ok());
    }
}
