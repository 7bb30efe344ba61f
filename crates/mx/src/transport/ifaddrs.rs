//! This host's interface addresses, from one `getifaddrs(3)` walk: what the UDP
//! transport's MTU lookup (`udp_mtu`) and MPI's choice of rails (`myrix_mpi::channel::
//! net`) both read. Owned values only; the list is freed before returning. Never
//! opens a socket or changes anything.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One address of one interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IfAddr {
    pub name: String,
    pub ip: IpAddr,
    /// The length of its network prefix (from the netmask; the address's full
    /// length when the kernel gives none).
    pub prefix: u8,
    /// `IFF_UP`.
    pub up: bool,
    /// `IFF_LOOPBACK`.
    pub loopback: bool,
}

/// Every IPv4 and IPv6 address of every interface, in the kernel's order; empty
/// when `getifaddrs` fails.
#[allow(unsafe_code)]
pub fn addrs() -> Vec<IfAddr> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list freed below, once.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut p = head;
    while !p.is_null() {
        // SAFETY: `p` is a node of the list getifaddrs returned, alive until freed.
        let ifa = unsafe { &*p };
        p = ifa.ifa_next;
        if ifa.ifa_name.is_null() {
            continue;
        }
        // SAFETY: a non-null address or netmask is a sockaddr of the family it says.
        let (Some(ip), mask) = (unsafe { ip_of(ifa.ifa_addr) }, unsafe {
            ip_of(ifa.ifa_netmask)
        }) else {
            continue;
        };
        let full = if ip.is_ipv4() { 32 } else { 128 };
        let prefix = match mask {
            Some(IpAddr::V4(m)) => u32::from(m).count_ones() as u8,
            Some(IpAddr::V6(m)) => u128::from(m).count_ones() as u8,
            None => full,
        };
        // SAFETY: a NUL-terminated name owned by the list.
        let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) }
            .to_string_lossy()
            .into_owned();
        out.push(IfAddr {
            name,
            ip,
            prefix,
            up: ifa.ifa_flags & libc::IFF_UP as u32 != 0,
            loopback: ifa.ifa_flags & libc::IFF_LOOPBACK as u32 != 0,
        });
    }
    // SAFETY: the list from getifaddrs, freed once.
    unsafe { libc::freeifaddrs(head) };
    out
}

/// The IP address a sockaddr holds, if it is IPv4 or IPv6.
///
/// # Safety
/// `a` is null or points to a sockaddr of the family it says.
#[allow(unsafe_code)]
unsafe fn ip_of(a: *const libc::sockaddr) -> Option<IpAddr> {
    if a.is_null() {
        return None;
    }
    // SAFETY: the caller's promise.
    unsafe {
        match (*a).sa_family as libc::c_int {
            libc::AF_INET => {
                let s = &*(a as *const libc::sockaddr_in);
                Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(s.sin_addr.s_addr))))
            }
            libc::AF_INET6 => {
                let s = &*(a as *const libc::sockaddr_in6);
                Some(IpAddr::V6(Ipv6Addr::from(s.sin6_addr.s6_addr)))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loopback_address_is_listed_as_loopback() {
        let all = addrs();
        let lo = all
            .iter()
            .find(|a| a.ip == IpAddr::V4(Ipv4Addr::LOCALHOST))
            .expect("127.0.0.1 on some interface");
        assert!(lo.loopback && lo.up, "{lo:?}");
        assert_eq!(lo.prefix, 8, "{lo:?}");
    }
}
