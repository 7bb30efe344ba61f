//! The UDP transport's frame size: what one datagram carries.
//!
//! Every frame costs the same at both ends whatever its length (a trip through the
//! engine, a segment through the kernel's packet path), so a large put's speed is set
//! by how many frames it takes: 713 per MiB at a 1500-byte MTU. When the socket is
//! bound to the address of an interface whose MTU is larger (a jumbo-frame link, a veth
//! pair whose MTU was raised), the frame fills that MTU instead, as the raw-Ethernet
//! transport's already does. The default stays the 1500-byte frame for a bound
//! loopback or wildcard address (where the route, not an interface, decides the way)
//! and where the interface cannot be found.
//!
//! A larger frame than the path carries would be dropped by a router on the way (the
//! socket sets "don't fragment" by default): above the 1500-byte size the socket asks
//! the kernel to fragment instead (`IP_PMTUDISC_DONT`), so a peer behind a smaller
//! link still gets every frame, slower. `MYRIX_UDP_MTU=N` sets the frame size (bytes
//! of UDP payload) whatever the interface says.
//!
//! Unsafe code: `getifaddrs(3)` walked and freed once (std offers no interface list).
#![allow(unsafe_code)]

use std::net::{IpAddr, SocketAddr};

/// IPv4 and UDP heads: a frame of `mtu - 28` bytes fills an IPv4 packet of `mtu`.
const V4_HEADS: usize = 20 + 8;
/// IPv6 and UDP heads.
const V6_HEADS: usize = 40 + 8;

/// The frame size for a socket bound to `local`: `MYRIX_UDP_MTU` if set (and a
/// number), else what the interface holding `local`'s address carries, else
/// `fallback` (the 1500-byte frame).
pub fn frame_size(local: &SocketAddr, fallback: usize) -> usize {
    if let Some(n) = std::env::var("MYRIX_UDP_MTU")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return n;
    }
    let ip = local.ip();
    if ip.is_loopback() || ip.is_unspecified() {
        return fallback;
    }
    match iface_of(ip).and_then(|name| super::eth::iface_hw(&name).ok()) {
        Some(hw) => frame_for_link(hw.mtu, ip.is_ipv4()).unwrap_or(fallback),
        None => fallback,
    }
}

/// The UDP payload an interface of MTU `link` carries in one packet, or `None` when
/// the MTU is too small to be believed (below IPv6's minimum of 1280).
pub fn frame_for_link(link: usize, v4: bool) -> Option<usize> {
    if link < 1280 {
        return None;
    }
    let heads = if v4 { V4_HEADS } else { V6_HEADS };
    Some((link - heads).min(65_507))
}

/// The name of the interface holding address `ip`, if any.
fn iface_of(ip: IpAddr) -> Option<String> {
    super::ifaddrs::addrs()
        .into_iter()
        .find(|a| a.ip == ip)
        .map(|a| a.name)
}

/// Whether the socket must be let fragment: frames above the 1500-byte size, which a
/// smaller link on the way would otherwise drop.
pub fn needs_fragmenting(frame: usize, v4: bool) -> bool {
    frame > if v4 { 1500 - V4_HEADS } else { 1500 - V6_HEADS }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_fill_the_link() {
        assert_eq!(frame_for_link(1500, true), Some(1472));
        assert_eq!(frame_for_link(1500, false), Some(1452));
        assert_eq!(frame_for_link(9000, true), Some(8972));
        assert_eq!(frame_for_link(65_535, true), Some(65_507));
        assert_eq!(frame_for_link(576, true), None);
        assert!(!needs_fragmenting(1472, true));
        assert!(needs_fragmenting(8972, true));
    }

    #[test]
    fn loopback_keeps_the_default() {
        if std::env::var_os("MYRIX_UDP_MTU").is_some() {
            return; // the override wins by design; nothing to check here
        }
        let a: SocketAddr = "127.0.0.1:0".parse().unwrap();
        assert_eq!(frame_size(&a, 1472), 1472);
        let w: SocketAddr = "0.0.0.0:0".parse().unwrap();
        assert_eq!(frame_size(&w, 1472), 1472);
        // An address no interface holds (TEST-NET-3): the default.
        assert_eq!(iface_of("203.0.113.77".parse().unwrap()), None);
        assert!(iface_of("127.0.0.1".parse().unwrap()).is_some());
    }
}
