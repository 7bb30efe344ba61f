//! Capture: every frame an endpoint sends and receives, written to a pcap file that
//! tcpdump and Wireshark open (`MYRIX_PCAP=FILE` for any program using the library, the
//! C interface's included; `--pcap FILE` on `myrix bench pingpong|stream`).
//!
//! * Raw Ethernet (`eth:`) frames are written as they are on the wire, in a file of link
//!   type Ethernet: destination and source MAC, EtherType 0x86DF, the transport's
//!   payload, padded to 60 bytes as the link pads them.
//! * Frames of the other transports (`self`, `shm`, `udp`) go in a file of link type
//!   USER0 (147), each behind the 8-byte pseudo-header of [`myrix_wire::pcap`]
//!   (transport, direction, header length, frame length; documented in `docs/mx.md`).
//!
//! The hook sits where the endpoint hands frames to its transport and takes them from
//! it: a frame is recorded once the transport took it (a frame a full ring refused is
//! recorded when it finally leaves). Off, it costs one branch on an `Option` per frame.
//! On, it costs a clock read and a write per frame (each record is flushed at once, so a
//! program that ends without closing its endpoint loses nothing).
//!
//! Endpoints of one process naming the same file share it (their records interleave);
//! several processes must name different files: `{pid}` in the name is replaced by the
//! process id.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use myrix_wire::pcap::{self, Direction, PcapWriter, PseudoHeader};

use crate::transport::{eth, Loc};

/// The environment variable that turns capture on for every endpoint a process opens.
pub const ENV: &str = "MYRIX_PCAP";

type Writer = Mutex<PcapWriter<BufWriter<File>>>;
type Sink = Arc<Writer>;

/// How an endpoint's frames become pcap records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// USER0 records behind the pseudo-header naming this transport.
    Pseudo(pcap::Transport),
    /// Ethernet records; `mac` is this endpoint's interface. The transport's payload is
    /// what [`eth::wire_image`] puts after the 14-byte Ethernet header.
    Eth { mac: [u8; 6], whole: bool },
}

impl Framing {
    fn link_type(self) -> u32 {
        match self {
            Framing::Pseudo(_) => pcap::LINKTYPE_USER0,
            Framing::Eth { .. } => pcap::LINKTYPE_ETHERNET,
        }
    }
}

/// One endpoint's capture.
pub struct Capture {
    sink: Sink,
    framing: Framing,
    scratch: Vec<u8>,
}

/// Files open for capture in this process, so endpoints naming one file share it.
static OPEN: Mutex<Vec<(PathBuf, Weak<Writer>)>> = Mutex::new(Vec::new());

/// `{pid}` in a capture file's name replaced by this process's id.
pub fn expand(path: &str) -> PathBuf {
    PathBuf::from(path.replace("{pid}", &std::process::id().to_string()))
}

impl Capture {
    /// Starts capturing to `path` (created or truncated; shared with the endpoints of
    /// this process already capturing to it, which must use the same link type).
    pub fn open(path: &Path, framing: Framing) -> io::Result<Capture> {
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|(_, w)| w.strong_count() > 0);
        let found = open
            .iter()
            .find(|(p, _)| p == path)
            .and_then(|(_, w)| w.upgrade());
        let sink = match found {
            Some(s) => {
                let lt = s.lock().unwrap_or_else(|e| e.into_inner()).link_type();
                if lt != framing.link_type() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "{}: already capturing frames of another link type in this process",
                            path.display()
                        ),
                    ));
                }
                s
            }
            None => {
                let f = File::create(path).map_err(|e| {
                    io::Error::new(e.kind(), format!("capture file {}: {e}", path.display()))
                })?;
                let w = PcapWriter::new(BufWriter::new(f), framing.link_type())?;
                let s = Arc::new(Mutex::new(w));
                open.push((path.to_path_buf(), Arc::downgrade(&s)));
                s
            }
        };
        Ok(Capture {
            sink,
            framing,
            scratch: Vec::with_capacity(2048),
        })
    }

    /// A frame the transport took to send to `to`.
    #[cold]
    pub fn sent(&mut self, to: &Loc, frame: &[u8]) {
        self.record(to, Direction::Sent, frame);
    }

    /// A frame the transport received from `from`.
    #[cold]
    pub fn received(&mut self, from: &Loc, frame: &[u8]) {
        self.record(from, Direction::Received, frame);
    }

    fn record(&mut self, peer: &Loc, direction: Direction, frame: &[u8]) {
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let mut w = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        // A capture that cannot be written must not stop the traffic it watches.
        let _ = match self.framing {
            Framing::Pseudo(transport) => w.write_pseudo(
                ts,
                PseudoHeader {
                    transport,
                    direction,
                },
                frame,
            ),
            Framing::Eth { mac, whole } => {
                let peer = match peer {
                    Loc::Eth(m) => *m,
                    _ => [0; 6],
                };
                let (dst, src) = match direction {
                    Direction::Sent => (peer, mac),
                    Direction::Received => (mac, peer),
                };
                self.scratch.clear();
                eth::wire_image(&dst, &src, whole, frame, &mut self.scratch);
                w.write(ts, &self.scratch)
            }
        };
        let _ = w.flush();
    }
}
