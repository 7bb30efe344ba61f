//! `eth:IFNAME` — MX frames straight in Ethernet frames, as Open-MX sends them: EtherType
//! 0x86DF on a raw `AF_PACKET` socket, no IP or UDP. Needs `CAP_NET_RAW` (root).
//!
//! The locator is the interface's MAC address (`eth:02aabbccddee`): a peer sends to it
//! through its own interface on the same Ethernet segment. Every endpoint on a host
//! opens its own socket and sees every MX frame that reaches the interface; the engine
//! drops those addressed to another endpoint (counted as stale). Frames the socket sees
//! leaving (its own, and other local endpoints') are skipped.
//!
//! Ethernet pads short frames to 60 bytes, which would lengthen a tiny MX frame, so each
//! frame is preceded by its length (two bytes, big-endian) and the padding is cut off.
//! Frames may be lost (a full socket buffer, a busy link): the engine's reliability is
//! on, as for UDP.
//!
//! A run of full-size frames to one peer (a pipelined put, a pull reply) leaves in one
//! `sendmmsg(2)` of up to [`BATCH_MAX`] frames, as the UDP transport batches them: the
//! link sees the same frames, the sender pays one system call per batch instead of one
//! per frame. A shorter frame ends the batch (everything leaves at once, so a small
//! message is never held back), and so do [`Transport::flush`] and a receive.
//!
//! `omx:IFNAME` opens the same transport for Open-MX's frames (`myrix_wire::codec::Omx`):
//! a frame is then a whole Ethernet frame, its head written by the codec (source MAC,
//! EtherType, the receiver's peer index) but for the destination MAC, which the
//! transport sets; no length prefix (Open-MX's layouts carry their lengths), padding to
//! 60 bytes; at most Open-MX's 9000 bytes. The socket is then `SOCK_RAW`.
//!
//! `omx+nic:IFNAME` ([`Eth::open_with`] with `host_peers`) also reaches the other
//! endpoints of this host on the interface, through the interface as Open-MX's
//! `OMX_DISABLE_SHARED` does (its driver loops such frames back): a frame to the
//! interface's own MAC is sent on the link as well as kept, and the socket, bound to
//! every protocol (`ETH_P_ALL`, the only way to see the frames other sockets send),
//! takes leaving frames addressed to its own MAC. Every frame of the interface then
//! crosses into the process (those of other protocols are skipped): a knob for testing
//! the NIC path, not for speed.
//!
//! `eth:` frames arrive in a receive ring shared with the kernel
//! ([`super::eth_ring`]) when the link's MTU fits its slots: an empty look costs no
//! system call. `omx:` and jumbo links use `recvfrom(2)`.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::eth_ring::RxRing;
use super::{Loc, Transport, Verdict};

/// Open-MX's EtherType.
pub const ETHERTYPE: u16 = 0x86DF;
/// The length prefix before each frame.
const PREFIX: usize = 2;

pub struct Eth {
    fd: OwnedFd,
    ifindex: i32,
    mac: [u8; 6],
    mtu: usize,
    buf: Vec<u8>,
    out: Vec<u8>,
    /// Frames are whole Ethernet frames (Open-MX's).
    whole: bool,
    /// The interface is the loopback, where the kernel hands a frame to our own MAC
    /// back to every socket; on other links it leaves and does not come back, so a
    /// frame to our own MAC (an endpoint talking to itself) is kept here instead.
    loopback: bool,
    looped: std::collections::VecDeque<Vec<u8>>,
    /// Other endpoints of this host are reached through the interface (`omx+nic:`).
    host_peers: bool,
    /// Full-size frames to one MAC waiting to leave in one `sendmmsg(2)`.
    batch: Batch,
    /// Where frames arrive when the socket has a receive ring ([`RxRing`]).
    ring: Option<RxRing>,
}

/// Frames per `sendmmsg(2)` at most.
pub const BATCH_MAX: usize = 32;

/// Frames (prefix included) to `to`, back to back in `bytes`, each `lens[i]` long.
#[derive(Default)]
struct Batch {
    to: Option<[u8; 6]>,
    lens: Vec<usize>,
    bytes: Vec<u8>,
}

/// An interface's hardware address, MTU and link type (`ARPHRD_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IfaceHw {
    pub mac: [u8; 6],
    pub mtu: usize,
    pub arphrd: u16,
}

/// [`IfaceHw`] of interface `ifname` in this process's network namespace (ioctls on a
/// throwaway socket; no privilege needed).
pub fn iface_hw(ifname: &str) -> io::Result<IfaceHw> {
    let bad = || io::Error::new(io::ErrorKind::InvalidInput, "not an interface name");
    if ifname.is_empty() || ifname.len() >= libc::IFNAMSIZ || ifname.contains('\0') {
        return Err(bad());
    }
    // SAFETY: plain socket(2); the descriptor is owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by socket(2) and is not owned elsewhere.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: ifreq is plain data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(ifname.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: SIOCGIFHWADDR fills the ifreq it is given.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFHWADDR, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the union's member SIOCGIFHWADDR wrote.
    let sa = unsafe { req.ifr_ifru.ifru_hwaddr };
    let mut mac = [0u8; 6];
    for (d, s) in mac.iter_mut().zip(sa.sa_data.iter()) {
        *d = *s as u8;
    }
    let arphrd = sa.sa_family;
    // SAFETY: SIOCGIFMTU fills the ifreq it is given (the name is unchanged).
    let mtu = if unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFMTU, &mut req) } < 0 {
        1500
    } else {
        // SAFETY: the union's member SIOCGIFMTU wrote.
        unsafe { req.ifr_ifru.ifru_mtu }.max(0) as usize
    };
    Ok(IfaceHw { mac, mtu, arphrd })
}

/// `aa:bb:cc:dd:ee:ff` or `aabbccddeeff`.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let hex: String = s.chars().filter(|&c| c != ':' && c != '-').collect();
    if hex.len() != 12 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut m = [0u8; 6];
    for (i, b) in m.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(m)
}

fn sockaddr(ifindex: i32, mac: &[u8; 6], protocol: u16) -> libc::sockaddr_ll {
    // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
    let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sa.sll_family = libc::AF_PACKET as u16;
    sa.sll_protocol = protocol.to_be();
    sa.sll_ifindex = ifindex;
    sa.sll_halen = 6;
    sa.sll_addr[..6].copy_from_slice(mac);
    sa
}

impl Eth {
    /// Opens a raw socket on interface `ifname` for MX frames: myrix's (behind a length
    /// prefix) or, with `whole`, whole Ethernet frames (Open-MX's).
    pub fn open(ifname: &str, whole: bool) -> io::Result<Eth> {
        Self::open_with(ifname, whole, false)
    }

    /// [`Eth::open`]; with `host_peers` (whole frames only), the endpoints of this host
    /// on the interface are reached through it too (see the module docs).
    pub fn open_with(ifname: &str, whole: bool, host_peers: bool) -> io::Result<Eth> {
        Self::open_inner(ifname, whole, host_peers, true)
    }

    /// The Ethernet address of `ifname`, once a raw socket could be opened on it (the
    /// socket is closed again, and no receive ring's kernel memory is taken for it).
    pub fn probe(ifname: &str) -> io::Result<[u8; 6]> {
        Ok(Self::open_inner(ifname, false, false, false)?.mac())
    }

    fn open_inner(ifname: &str, whole: bool, host_peers: bool, ring: bool) -> io::Result<Eth> {
        let host_peers = host_peers && whole;
        let protocol = if host_peers {
            libc::ETH_P_ALL as u16
        } else {
            ETHERTYPE
        };
        let bad = |m: &str| io::Error::new(io::ErrorKind::InvalidInput, format!("{ifname}: {m}"));
        let name = CString::new(ifname).map_err(|_| bad("not an interface name"))?;
        // SAFETY: a valid C string.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
        if ifindex == 0 {
            return Err(bad("no such network interface"));
        }
        // From the kernel of this process's network namespace: `/sys/class/net` shows
        // the namespace that mounted it, not one entered with `setns(2)` (`myrix
        // mpiexec --netns`), where it has no such interface or another of that name.
        let hw = iface_hw(ifname).map_err(|e| bad(&format!("no Ethernet address: {e}")))?;
        let mac = hw.mac;
        let link_mtu = hw.mtu;
        // SAFETY: plain socket(2); the descriptor is owned at once.
        let fd = unsafe {
            libc::socket(
                libc::AF_PACKET,
                if whole {
                    libc::SOCK_RAW
                } else {
                    libc::SOCK_DGRAM
                } | libc::SOCK_NONBLOCK
                    | libc::SOCK_CLOEXEC,
                i32::from(protocol.to_be()),
            )
        };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("raw Ethernet socket on {ifname}: {e} (needs CAP_NET_RAW)"),
            ));
        }
        // SAFETY: fd was just returned by socket(2) and is not owned elsewhere.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let sa = sockaddr(ifindex, &[0; 6], protocol);
        // SAFETY: sa is a valid sockaddr_ll of the length given.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &sa as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        // Room for a few pull blocks in flight; the kernel caps it at rmem_max.
        let size: libc::c_int = 8 << 20;
        for opt in [libc::SO_RCVBUF, libc::SO_SNDBUF] {
            // SAFETY: an int option of the right size.
            unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_SOCKET,
                    opt,
                    &size as *const libc::c_int as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as u32,
                );
            }
        }
        if !host_peers {
            // Our own frames leaving are of no use here (`poll_recv` skips them):
            // without this the kernel clones each one to the socket and a receive is
            // spent per frame sent. Linux 4.20 and later; older kernels refuse it,
            // which only costs that receive.
            const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
            let one: libc::c_int = 1;
            // SAFETY: an int option of the right size.
            unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_PACKET,
                    PACKET_IGNORE_OUTGOING,
                    &one as *const libc::c_int as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as u32,
                );
            }
        }
        // Length-prefixed frames arrive in a ring shared with the kernel when it can
        // be had (no system call per look: `eth_ring`).
        let ring = if whole || host_peers || !ring {
            None
        } else {
            RxRing::open(fd.as_raw_fd(), link_mtu)
        };
        let mtu = if whole {
            (link_mtu + ETH_HLEN).clamp(128, myrix_wire::codec::omx::MTU)
        } else {
            link_mtu.clamp(128, 65_535) - PREFIX
        };
        Ok(Eth {
            fd,
            ifindex,
            mac,
            mtu,
            buf: vec![0; 65_536],
            out: vec![0; 65_536],
            whole,
            // ARPHRD_LOOPBACK.
            loopback: hw.arphrd == libc::ARPHRD_LOOPBACK,
            looped: Default::default(),
            host_peers,
            batch: Batch::default(),
            ring,
        })
    }

    /// [`Transport::poll_recv`] from the receive ring: frames to our own MAC kept
    /// aside first, then the ring's, up to `max`; a frame shorter than the MTU ends
    /// the poll, as for `recvfrom(2)` below.
    fn poll_ring<F: FnMut(&Loc, &[u8]) -> Verdict>(&mut self, max: usize, mut deliver: F) -> usize {
        let mut n = 0;
        while n < max {
            let Some(f) = self.looped.pop_front() else {
                break;
            };
            n += 1;
            let _ = deliver(&Loc::Eth(self.mac), &f);
        }
        let (mtu, Some(ring)) = (self.mtu, self.ring.as_mut()) else {
            return n;
        };
        while n < max {
            let mut short = false;
            let took = ring.next(|fr| {
                // Leaving frames are not ours (PACKET_IGNORE_OUTGOING keeps most away).
                if fr.pkttype == libc::PACKET_OUTGOING || fr.bytes.len() < PREFIX {
                    return;
                }
                let len = u16::from_be_bytes([fr.bytes[0], fr.bytes[1]]) as usize;
                if PREFIX + len > fr.bytes.len() {
                    return; // cut short on the way: not a frame of ours
                }
                n += 1;
                let _ = deliver(&Loc::Eth(fr.from), &fr.bytes[PREFIX..PREFIX + len]);
                short = len < mtu;
            });
            if !took || short {
                break;
            }
        }
        n
    }

    /// Frames arrive through the receive ring ([`RxRing`]), not `recvfrom(2)`.
    pub fn has_ring(&self) -> bool {
        self.ring.is_some()
    }

    /// Frames are whole Ethernet frames (an `omx:` board).
    pub fn whole(&self) -> bool {
        self.whole
    }

    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }
}

impl Eth {
    /// Sends the batched frames: one `sendmmsg(2)` (again for what a short count left).
    /// A frame the kernel refuses for lack of room or a link going down is lost, as
    /// with `sendto`: the engine resends.
    fn flush_batch(&mut self) -> io::Result<()> {
        let Some(mac) = self.batch.to.take() else {
            return Ok(());
        };
        let sa = sockaddr(self.ifindex, &mac, ETHERTYPE);
        let b = &mut self.batch;
        let mut iov: [libc::iovec; BATCH_MAX] = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; BATCH_MAX];
        let n = b.lens.len().min(BATCH_MAX);
        let mut at = 0;
        for (v, &len) in iov.iter_mut().zip(&b.lens) {
            v.iov_base = b.bytes[at..].as_mut_ptr() as *mut libc::c_void;
            v.iov_len = len;
            at += len;
        }
        // SAFETY: mmsghdr is plain data; every pointer set below stays valid for the call.
        let mut msgs: [libc::mmsghdr; BATCH_MAX] = unsafe { std::mem::zeroed() };
        for (m, v) in msgs.iter_mut().zip(iov.iter_mut()).take(n) {
            m.msg_hdr.msg_name = &sa as *const libc::sockaddr_ll as *mut libc::c_void;
            m.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            m.msg_hdr.msg_iov = v;
            m.msg_hdr.msg_iovlen = 1;
        }
        let mut sent = 0;
        let mut r = Ok(());
        while sent < n {
            // SAFETY: `msgs[sent..n]` point at `iov` entries inside `b.bytes` and at `sa`,
            // all alive for the call.
            let k = unsafe {
                libc::sendmmsg(
                    self.fd.as_raw_fd(),
                    msgs[sent..].as_mut_ptr(),
                    (n - sent) as u32,
                    0,
                )
            };
            if k <= 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // Lost, as a `sendto` that fails so (see `send`).
                    Some(libc::EAGAIN | libc::ENOBUFS | libc::ENETDOWN | libc::ENXIO) => {}
                    _ => r = Err(e),
                }
                break;
            }
            sent += k as usize;
        }
        b.lens.clear();
        b.bytes.clear();
        r
    }

    /// The socket's descriptor, for a thread that sleeps until a frame arrives.
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }
}

/// Shortest Ethernet frame without its FCS: the link pads shorter ones.
const ETH_ZLEN: usize = 60;

/// The bytes an Ethernet frame carrying `frame` between `src` and `dst` has on the wire
/// (appended to `out`), for captures: the Ethernet header, the transport's payload (the
/// length prefix and `frame`; or, with `whole`, `frame` is a whole Ethernet frame
/// already, whose MACs are set), padding to 60 bytes.
pub fn wire_image(dst: &[u8; 6], src: &[u8; 6], whole: bool, frame: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    if whole {
        out.extend_from_slice(frame);
        if out.len() - start >= 12 {
            out[start..start + 6].copy_from_slice(dst);
            out[start + 6..start + 12].copy_from_slice(src);
        }
    } else {
        out.extend_from_slice(dst);
        out.extend_from_slice(src);
        out.extend_from_slice(&ETHERTYPE.to_be_bytes());
        out.extend_from_slice(&(frame.len() as u16).to_be_bytes());
        out.extend_from_slice(frame);
    }
    let len = out.len() - start;
    if len < ETH_ZLEN {
        out.resize(start + ETH_ZLEN, 0);
    }
}

fn hex(mac: &[u8; 6]) -> String {
    mac.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes of the Ethernet header.
const ETH_HLEN: usize = 14;

impl Transport for Eth {
    fn locator(&self) -> String {
        let t = if self.whole { "omx" } else { "eth" };
        format!("{t}:{}", hex(&self.mac))
    }
    fn mtu(&self) -> usize {
        self.mtu
    }
    fn reliable(&self) -> bool {
        false
    }
    fn resolve(&mut self, location: &str, _endpoint: u8) -> io::Result<Loc> {
        parse_mac(location).map(Loc::Eth).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("'{location}' is not an Ethernet address"),
            )
        })
    }
    fn send(&mut self, to: &Loc, frame: &[u8]) -> io::Result<bool> {
        let Loc::Eth(mac) = to else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not an Ethernet location",
            ));
        };
        if frame.len() > self.mtu {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "frame too long",
            ));
        }
        let len = if self.whole {
            if frame.len() < ETH_HLEN {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "frame too short",
                ));
            }
            self.out[..frame.len()].copy_from_slice(frame);
            self.out[..6].copy_from_slice(mac);
            self.out[6..12].copy_from_slice(&self.mac);
            let n = frame.len().max(ETH_ZLEN);
            self.out[frame.len()..n].fill(0);
            n
        } else {
            self.out[..PREFIX].copy_from_slice(&(frame.len() as u16).to_be_bytes());
            self.out[PREFIX..PREFIX + frame.len()].copy_from_slice(frame);
            PREFIX + frame.len()
        };
        let full = frame.len() == self.mtu && !self.whole;
        if self.batch.to.is_some()
            && (self.batch.to != Some(*mac) || !full || self.batch.lens.len() == BATCH_MAX)
        {
            self.flush_batch()?;
        }
        if full && *mac != self.mac {
            let b = &mut self.batch;
            b.to = Some(*mac);
            b.lens.push(len);
            b.bytes.extend_from_slice(&self.out[..len]);
            if b.lens.len() == BATCH_MAX {
                self.flush_batch()?;
            }
            return Ok(true);
        }
        if *mac == self.mac && !self.loopback {
            let at = if self.whole { 0 } else { PREFIX };
            self.looped.push_back(self.out[at..len].to_vec());
            if !self.host_peers {
                return Ok(true);
            }
            // Also on the link, where the host's other sockets see it leave.
        }
        let sa = sockaddr(self.ifindex, mac, ETHERTYPE);
        // SAFETY: the buffer and the address are valid for the lengths given.
        let r = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                self.out.as_ptr() as *const libc::c_void,
                len,
                0,
                &sa as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            // A full queue or a link going down loses the frame; the engine resends.
            return match e.raw_os_error() {
                Some(libc::EAGAIN | libc::ENOBUFS | libc::ENETDOWN | libc::ENXIO) => Ok(true),
                _ => Err(e),
            };
        }
        Ok(true)
    }
    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        // Looked at here, not in the out-of-line `flush_batch`: every poll of the
        // endpoint flushes, nearly always with nothing batched.
        if self.batch.to.is_none() {
            return Ok(());
        }
        self.flush_batch()
    }
    #[inline]
    fn poll_recv<F: FnMut(&Loc, &[u8]) -> Verdict>(
        &mut self,
        max: usize,
        mut deliver: F,
    ) -> io::Result<usize> {
        // Whoever forgot to flush, the frames leave before we look for answers.
        if self.batch.to.is_some() {
            self.flush_batch()?;
        }
        if self.ring.is_some() {
            return Ok(self.poll_ring(max, deliver));
        }
        let mut n = 0;
        while n < max {
            if let Some(f) = self.looped.pop_front() {
                n += 1;
                let _ = deliver(&Loc::Eth(self.mac), &f);
                continue;
            }
            // SAFETY: sockaddr_ll is plain data.
            let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut sl = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            // SAFETY: the buffer and the address are valid for the lengths given.
            let r = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    self.buf.as_mut_ptr() as *mut libc::c_void,
                    self.buf.len(),
                    0,
                    &mut sa as *mut libc::sockaddr_ll as *mut libc::sockaddr,
                    &mut sl,
                )
            };
            if r < 0 {
                // errno itself: most polls find the socket empty (EAGAIN), and an
                // `io::Error` built and dropped for each cost ~20 instructions of the
                // ~540 an empty poll takes (callgrind, docs/mpi-net.md "Session 27").
                return match errno() {
                    // The interface went down (reported once): no frames now, as for a
                    // send, which loses its frame to the engine's resending.
                    libc::EAGAIN | libc::ENETDOWN => Ok(n),
                    libc::EINTR => continue,
                    e => Err(io::Error::from_raw_os_error(e)),
                };
            }
            let got = r as usize;
            match sa.sll_pkttype {
                // Leaving: another socket's frame to this interface's MAC is for the
                // host's endpoints (`omx+nic:`); the rest is not for us.
                libc::PACKET_OUTGOING
                    if self.host_peers
                        && got > ETH_HLEN
                        && self.buf[..6] == self.mac
                        && self.buf[12..14] == ETHERTYPE.to_be_bytes() => {}
                libc::PACKET_OUTGOING => continue,
                // On a shared link (a veth, a bridge) frames to other MACs reach the
                // socket too: Open-MX's frames name their receiver by MAC.
                libc::PACKET_OTHERHOST if self.whole => continue,
                _ => {}
            }
            if self.host_peers && (got <= ETH_HLEN || self.buf[12..14] != ETHERTYPE.to_be_bytes()) {
                continue;
            }
            let mut from = [0u8; 6];
            from.copy_from_slice(&sa.sll_addr[..6]);
            if self.whole {
                // The whole frame, its padding too: the layouts carry their lengths.
                if got <= ETH_HLEN {
                    continue;
                }
                n += 1;
                let _ = deliver(&Loc::Eth(from), &self.buf[..got]);
                if got < self.mtu {
                    break; // as below
                }
                continue;
            }
            if got < PREFIX {
                continue;
            }
            let len = u16::from_be_bytes([self.buf[0], self.buf[1]]) as usize;
            if PREFIX + len > got {
                // Cut short on the way: not a frame of ours.
                continue;
            }
            n += 1;
            let _ = deliver(&Loc::Eth(from), &self.buf[PREFIX..PREFIX + len]);
            // A frame shorter than the MTU returns at once, as the UDP transport does:
            // asking again would most often cost a whole system call to learn the
            // socket is empty, on the critical path of a ping-pong (one `recvfrom(2)`
            // per frame received); a stream of full frames goes on being read.
            if len < self.mtu {
                break;
            }
        }
        Ok(n)
    }
}

/// The calling thread's `errno`, read without building an [`io::Error`] (what a
/// receive that found nothing looks at, on every empty poll).
#[inline]
pub(crate) fn errno() -> i32 {
    // SAFETY: `__errno_location` returns the calling thread's errno slot, always valid.
    unsafe { *libc::__errno_location() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a capture writes for an Ethernet frame is what the wire carries.
    #[test]
    fn wire_images_are_ethernet_frames() {
        let (d, s) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
        let mut out = Vec::new();
        wire_image(&d, &s, false, b"mx", &mut out);
        assert_eq!(out.len(), ETH_ZLEN);
        assert_eq!(out[..6], d);
        assert_eq!(out[6..12], s);
        assert_eq!(out[12..14], [0x86, 0xdf]);
        assert_eq!(out[14..18], [0, 2, b'm', b'x']);
        let mut whole = vec![0xee; 100];
        whole[12..14].copy_from_slice(&[0x86, 0xdf]);
        out.clear();
        wire_image(&d, &s, true, &whole, &mut out);
        assert_eq!(out.len(), 100);
        assert_eq!((&out[..6], &out[6..12]), (&d[..], &s[..]));
        assert_eq!(out[12..], whole[12..]);
    }

    #[test]
    fn interfaces_are_read_from_this_namespace_and_bad_names_refused() {
        let lo = iface_hw("lo").unwrap();
        assert_eq!(lo.arphrd, libc::ARPHRD_LOOPBACK);
        assert_eq!(lo.mac, [0; 6]);
        assert!(lo.mtu > 0);
        for bad in ["", "no-such-iface0", "sixteen-bytes-xx", "a\0b"] {
            assert!(iface_hw(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn macs_parse_in_both_spellings_and_nothing_else() {
        let m = [0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee];
        assert_eq!(parse_mac("02:aa:bb:cc:dd:ee"), Some(m));
        assert_eq!(parse_mac("02aabbccddee"), Some(m));
        assert_eq!(hex(&m), "02aabbccddee");
        for bad in [
            "",
            "02aabbccdd",
            "02aabbccddeeff",
            "zzaabbccddee",
            "02:aa:bb:cc:dd:é",
        ] {
            assert_eq!(parse_mac(bad), None, "{bad}");
        }
    }
}
