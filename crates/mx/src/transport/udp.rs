//! `udp:HOST:PORT` — one non-blocking UDP socket per endpoint, IPv4 or IPv6.
//!
//! Datagrams may be lost, duplicated or reordered: the engine's reliability handles it.
//! The frame size fills the MTU of the interface the socket is bound to (1500 bytes
//! on loopback, a wildcard address, or an interface not found: `udp_mtu`), so nothing
//! depends on IP fragmentation (which turns one lost fragment into a lost frame) on the
//! local link.
//!
//! A run of full-size frames to one peer (a pipelined put, a pull reply) leaves in one
//! system call where Linux offers segmentation offload (`UDP_SEGMENT`): the kernel cuts
//! the batch into ordinary datagrams of the frame size, so the wire and the receiver
//! see exactly what one `sendto` per frame would have sent. The receiver asks for the
//! reverse (`UDP_GRO`): datagrams of one flow that arrive together come up in one
//! `recvmsg`, with their size, and are handed to the engine one by one. Only full-size
//! frames wait in the batch; a shorter frame ends it and everything leaves at once, so
//! a small message is never held back. Where the kernel refuses either option the
//! transport falls back to a system call per datagram.
//!
//! Unsafe code: `sendmsg`/`recvmsg` with control messages and one `setsockopt`, which
//! neither std nor socket2 offer (each block says what it relies on).
#![allow(unsafe_code)]

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::os::fd::AsRawFd;

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use super::{Loc, Transport, Verdict};

pub struct Udp {
    sock: UdpSocket,
    local: SocketAddr,
    mtu: usize,
    buf: Vec<u8>,
    /// Full-size frames to one peer waiting to leave together (segmentation offload).
    batch: Batch,
    /// The kernel coalesces arriving datagrams (`UDP_GRO` accepted).
    gro: bool,
}

/// Frames to one address, back to back, each `seg` bytes but perhaps the last.
struct Batch {
    /// False once the kernel refused `UDP_SEGMENT`: one datagram per call from then on.
    on: bool,
    to: Option<SocketAddr>,
    seg: usize,
    count: usize,
    bytes: Vec<u8>,
}

/// Segments per batch: the kernel's limit (`UDP_MAX_SEGMENTS`) is 64 on older kernels.
const MAX_SEGMENTS: usize = 64;
/// Bytes per batch: an IP datagram's payload.
const MAX_BATCH: usize = 65_507 - 8;

/// Frame size that fits a 1500-byte MTU: 1500 - 20 (IPv4) - 8 (UDP); 1452 for IPv6.
pub fn default_mtu(addr: &SocketAddr) -> usize {
    if addr.is_ipv4() {
        1472
    } else {
        1452
    }
}

/// Whether `MYRIX_UDP_OFFLOAD=0` turns segmentation and coalescing off (to measure
/// what they bring, or on a kernel that misbehaves with them).
fn offload_wanted() -> bool {
    std::env::var("MYRIX_UDP_OFFLOAD").map_or(true, |v| v != "0")
}

fn set_int(fd: libc::c_int, level: libc::c_int, opt: libc::c_int, v: libc::c_int) -> bool {
    // SAFETY: a plain integer option on a socket we own.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            &v as *const libc::c_int as *const libc::c_void,
            size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

impl Udp {
    /// Binds `addr` (`127.0.0.1:0` picks a free port).
    pub fn bind(addr: &str, mtu: Option<usize>) -> io::Result<Udp> {
        let sa: SocketAddr = addr
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address"))?;
        let sock = Socket::new(Domain::for_address(sa), Type::DGRAM, Some(Protocol::UDP))?;
        if sa.is_ipv6() {
            sock.set_only_v6(true)?;
        }
        // Room for a few pull blocks in flight; the kernel caps it at rmem_max.
        let _ = sock.set_recv_buffer_size(8 << 20);
        let _ = sock.set_send_buffer_size(8 << 20);
        sock.bind(&sa.into())?;
        sock.set_nonblocking(true)?;
        let sock: UdpSocket = sock.into();
        let local = sock.local_addr()?;
        // The interface's MTU, not a fixed 1500-byte frame: frames per MiB are what a
        // large put costs (`udp_mtu`).
        let mtu = mtu
            .unwrap_or_else(|| super::udp_mtu::frame_size(&local, default_mtu(&local)))
            .clamp(128, 65_507);
        if super::udp_mtu::needs_fragmenting(mtu, local.is_ipv4()) {
            let (level, opt, dont) = if local.is_ipv4() {
                (
                    libc::IPPROTO_IP,
                    libc::IP_MTU_DISCOVER,
                    libc::IP_PMTUDISC_DONT,
                )
            } else {
                (
                    libc::IPPROTO_IPV6,
                    libc::IPV6_MTU_DISCOVER,
                    libc::IPV6_PMTUDISC_DONT,
                )
            };
            // Best effort: refused, a frame too large for the path is lost and resent.
            let _ = set_int(sock.as_raw_fd(), level, opt, dont);
        }
        let offload = offload_wanted();
        let gro = offload
            && std::env::var("MYRIX_UDP_GRO").map_or(true, |v| v != "0")
            && set_int(sock.as_raw_fd(), libc::SOL_UDP, libc::UDP_GRO, 1);
        Ok(Udp {
            sock,
            local,
            mtu,
            buf: vec![0; 65_536],
            batch: Batch {
                on: offload,
                to: None,
                seg: 0,
                count: 0,
                bytes: Vec::with_capacity(if offload { MAX_BATCH } else { 0 }),
            },
            gro,
        })
    }
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }
    /// The socket's descriptor, for a thread that sleeps until a frame arrives.
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        self.sock.as_raw_fd()
    }

    /// One datagram, the errors that mean "lost" taken as sent.
    fn send_one(&self, frame: &[u8], to: &SocketAddr) -> io::Result<()> {
        match self.sock.send_to(frame, to) {
            Ok(_) => Ok(()),
            Err(e) if lost(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Sends what the batch holds: one datagram as such, several in one call cut by the
    /// kernel into datagrams of the batch's segment size.
    fn flush_batch(&mut self) -> io::Result<()> {
        let b = &mut self.batch;
        let Some(to) = b.to.take() else {
            return Ok(());
        };
        let count = std::mem::take(&mut b.count);
        let r = if count == 1 {
            self.send_one(&self.batch.bytes, &to)
        } else {
            match send_segmented(
                self.sock.as_raw_fd(),
                &self.batch.bytes,
                self.batch.seg,
                &to,
            ) {
                Ok(()) => Ok(()),
                Err(e) if lost(&e) => Ok(()),
                // EIO, EINVAL: no segmentation here (a device without checksum offload,
                // an old kernel). Send them one by one, and from now on.
                Err(_) => {
                    self.batch.on = false;
                    let seg = self.batch.seg;
                    let mut r = Ok(());
                    for f in self.batch.bytes.chunks(seg) {
                        r = self.send_one(f, &to);
                        if r.is_err() {
                            break;
                        }
                    }
                    r
                }
            }
        };
        self.batch.bytes.clear();
        r
    }
}

/// The errors a datagram meets that make it lost, like any other loss: a full socket
/// buffer, an ICMP error from an earlier datagram, a firewall dropping it. The engine
/// resends.
fn lost(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::PermissionDenied
    )
}

/// `sendmsg` of `bytes` to `to` with a `UDP_SEGMENT` control message of `seg`.
fn send_segmented(fd: libc::c_int, bytes: &[u8], seg: usize, to: &SocketAddr) -> io::Result<()> {
    let addr = SockAddr::from(*to);
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    // Room for one cmsg holding a u16, aligned as the kernel wants it.
    let mut control = [0u64; 4];
    // SAFETY: every pointer is to a live local of the right size; the control buffer is
    // large enough for CMSG_SPACE(2) (checked below) and 8-byte aligned.
    unsafe {
        let space = libc::CMSG_SPACE(size_of::<u16>() as u32) as usize;
        debug_assert!(space <= size_of::<[u64; 4]>());
        let mut msg: libc::msghdr = zeroed();
        msg.msg_name = addr.as_ptr() as *mut libc::c_void;
        msg.msg_namelen = addr.len();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = space as _;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_UDP;
        (*c).cmsg_type = libc::UDP_SEGMENT;
        (*c).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut u16, seg as u16);
        if libc::sendmsg(fd, &msg, 0) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// One datagram (or, with `gro`, a run the kernel coalesced, and its segment size)
/// and its sender. Err: the raw errno, so the empty socket most polls find (EAGAIN)
/// builds no `io::Error` (~20 instructions of an empty poll; docs/mpi-net.md,
/// "Session 27"); `EINVAL` for a sender that is not an IP address.
fn recv_raw(
    fd: libc::c_int,
    buf: &mut [u8],
    gro: bool,
) -> Result<(usize, SocketAddr, Option<usize>), i32> {
    // SAFETY: the storage, iovec and control buffer are live locals of the sizes given;
    // control messages are read only within msg_controllen, as the CMSG macros walk them.
    unsafe {
        let mut storage: libc::sockaddr_storage = zeroed();
        let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        let mut seg = None;
        let n = if gro {
            let mut iov = libc::iovec {
                iov_base: buf.as_mut_ptr() as *mut libc::c_void,
                iov_len: buf.len(),
            };
            let mut control = [0u64; 8];
            let mut msg: libc::msghdr = zeroed();
            msg.msg_name = &mut storage as *mut _ as *mut libc::c_void;
            msg.msg_namelen = len;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
            msg.msg_controllen = size_of::<[u64; 8]>() as _;
            let n = libc::recvmsg(fd, &mut msg, 0);
            if n < 0 {
                return Err(super::eth::errno());
            }
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == libc::UDP_GRO {
                    let s = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::c_int);
                    if s > 0 {
                        seg = Some(s as usize);
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
            len = msg.msg_namelen;
            n
        } else {
            // A plain `recvfrom`, as std's `recv_from` makes, without its `io::Error`.
            let n = libc::recvfrom(
                fd,
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                0,
                &mut storage as *mut _ as *mut libc::sockaddr,
                &mut len,
            );
            if n < 0 {
                return Err(super::eth::errno());
            }
            n
        };
        let from = SockAddr::new(storage, len)
            .as_socket()
            .ok_or(libc::EINVAL)?;
        Ok((n as usize, from, seg))
    }
}

impl Transport for Udp {
    fn locator(&self) -> String {
        format!("udp:{}", self.local)
    }
    fn mtu(&self) -> usize {
        self.mtu
    }
    fn reliable(&self) -> bool {
        false
    }
    fn resolve(&mut self, location: &str, _endpoint: u8) -> io::Result<Loc> {
        let sa = location
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address"))?;
        Ok(Loc::Udp(sa))
    }
    fn send(&mut self, to: &Loc, frame: &[u8]) -> io::Result<bool> {
        let Loc::Udp(sa) = to else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a UDP location",
            ));
        };
        let full = frame.len() == self.mtu;
        let b = &self.batch;
        if !b.on || (b.to.is_none() && !full) {
            // Nothing waiting and nothing to wait for: straight out.
            self.send_one(frame, sa)?;
            return Ok(true);
        }
        if b.to.is_some()
            && (b.to != Some(*sa)
                || frame.len() > b.seg
                || b.count == MAX_SEGMENTS
                || b.bytes.len() + frame.len() > MAX_BATCH)
        {
            self.flush_batch()?;
            if !full {
                self.send_one(frame, sa)?;
                return Ok(true);
            }
        }
        let b = &mut self.batch;
        if b.to.is_none() {
            b.to = Some(*sa);
            b.seg = frame.len();
        }
        b.bytes.extend_from_slice(frame);
        b.count += 1;
        // A shorter frame can only end a batch.
        if !full {
            self.flush_batch()?;
        }
        Ok(true)
    }
    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        // Every poll of the endpoint flushes, nearly always with nothing batched.
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
        let mut n = 0;
        while n < max {
            match recv_raw(self.sock.as_raw_fd(), &mut self.buf, self.gro) {
                Ok((len, from, seg)) => {
                    let from = Loc::Udp(from);
                    let seg = seg.unwrap_or(len).max(1);
                    for f in self.buf[..len].chunks(seg) {
                        n += 1;
                        let _ = deliver(&from, f);
                    }
                    // Return at once: asking again would most often cost a whole
                    // system call just to learn the socket is empty, on the critical
                    // path of a ping-pong. The caller polls again anyway.
                    if len < self.mtu {
                        break;
                    }
                }
                Err(libc::EAGAIN) => break,
                // An ICMP answer to an earlier send (the peer's port closed), or a
                // signal: nothing for this poll, look again.
                Err(libc::ECONNREFUSED | libc::ECONNRESET | libc::EINTR) => continue,
                Err(e) => return Err(io::Error::from_raw_os_error(e)),
            }
        }
        Ok(n)
    }
}
