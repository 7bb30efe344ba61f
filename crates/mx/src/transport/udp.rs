//! `udp:HOST:PORT` — one non-blocking UDP socket per endpoint, IPv4 or IPv6.
//!
//! Datagrams may be lost, duplicated or reordered: the engine's reliability handles it.
//! The default frame size keeps a datagram inside a 1500-byte Ethernet MTU, so nothing
//! depends on IP fragmentation (which turns one lost fragment into a lost frame).

use std::io;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};

use socket2::{Domain, Protocol, Socket, Type};

use super::{Loc, Transport, Verdict};

pub struct Udp {
    sock: UdpSocket,
    local: SocketAddr,
    mtu: usize,
    buf: Vec<u8>,
}

/// Frame size that fits a 1500-byte MTU: 1500 - 20 (IPv4) - 8 (UDP); 1452 for IPv6.
pub fn default_mtu(addr: &SocketAddr) -> usize {
    if addr.is_ipv4() {
        1472
    } else {
        1452
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
        let mtu = mtu
            .unwrap_or_else(|| default_mtu(&local))
            .clamp(128, 65_507);
        Ok(Udp {
            sock,
            local,
            mtu,
            buf: vec![0; 65_536],
        })
    }
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }
    /// The socket's descriptor, for a thread that sleeps until a frame arrives.
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.sock)
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
        match self.sock.send_to(frame, sa) {
            Ok(_) => Ok(true),
            // A full socket buffer, an ICMP error from an earlier datagram, a firewall
            // dropping it: the frame is lost like any other, and the engine resends.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::ConnectionRefused
                        | io::ErrorKind::ConnectionReset
                        | io::ErrorKind::PermissionDenied
                ) =>
            {
                Ok(true)
            }
            Err(e) => Err(e),
        }
    }
    #[inline]
    fn poll_recv<F: FnMut(&Loc, &[u8]) -> Verdict>(
        &mut self,
        max: usize,
        mut deliver: F,
    ) -> io::Result<usize> {
        let mut n = 0;
        while n < max {
            match self.sock.recv_from(&mut self.buf) {
                Ok((len, from)) => {
                    n += 1;
                    let _ = deliver(&Loc::Udp(from), &self.buf[..len]);
                    // Return at once: asking again would most often cost a whole
                    // system call just to learn the socket is empty, on the critical
                    // path of a ping-pong. The caller polls again anyway.
                    if len < self.mtu {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
                    ) =>
                {
                    continue
                }
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
}
