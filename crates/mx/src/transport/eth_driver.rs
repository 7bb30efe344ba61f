//! The part of Open-MX's driver that answers for endpoints that are not open, in user
//! space. Open-MX's kernel module sees every frame that reaches an interface and
//! refuses one for an endpoint id with nothing open (a NACK with ENDPT_CLOSED, or
//! BAD_ENDPT past the host's ids), so the sender's request ends at once with
//! `MX_STATUS_ENDPOINT_CLOSED` / `MX_STATUS_BAD_ENDPOINT` rather than after its timeout.
//! myrix has no kernel part: each Open-MX endpoint's own socket sees every frame of the
//! interface, so the endpoints of a host share the driver's job between them.
//!
//! * Each endpoint opened on an interface holds a claim on its id there: an abstract
//!   Unix socket named after the interface and the id (`myrix-omx-IFNAME-ID`). A second
//!   open of the same id on the interface fails with `AddrInUse` (Open-MX's EBUSY);
//!   the claim ends with the endpoint, or its process.
//! * A frame that reaches an endpoint for another id is refused unless that id is
//!   claimed (a connect to the name answers whether anyone holds it).
//! * One endpoint per interface answers (the *responder*, whichever first bound the
//!   name `myrix-omx-IFNAME-driver`; another takes over when it closes), so a frame is
//!   refused once however many endpoints the host has open.
//!
//! Abstract Unix names live in the network namespace, as the interface does, so hosts
//! simulated by namespaces each have their own. What differs from Open-MX: a host with
//! no endpoint open on the interface answers nothing (no kernel part to do it; the
//! sender's request times out as before), and the refusal leaves when the responder's
//! process makes progress (as its other frames do).

use std::io;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// Frames held for refusal between two polls, at most: a burst past it is answered
/// at the sender's resend.
const PENDING_MAX: usize = 32;

/// An endpoint's share of the driver's job on its interface.
pub struct Driver {
    iface: String,
    _claim: UnixDatagram,
    /// The responder's name, once this endpoint holds it.
    responder: Option<UnixDatagram>,
    /// Frames for other endpoint ids, to refuse after the poll, with where they came
    /// from.
    pub pending: Vec<(super::Loc, Vec<u8>)>,
    /// Frames refused so far.
    pub refused: u64,
}

fn name(iface: &str, what: &str) -> io::Result<SocketAddr> {
    SocketAddr::from_abstract_name(format!("myrix-omx-{iface}-{what}").as_bytes())
}

impl Driver {
    /// Claims endpoint id `id` on interface `iface`; `AddrInUse` when it is open already.
    pub fn open(iface: &str, id: u8) -> io::Result<Driver> {
        let claim = UnixDatagram::bind_addr(&name(iface, &id.to_string())?).map_err(|e| {
            if e.kind() == io::ErrorKind::AddrInUse {
                io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("endpoint {id} is open on {iface} already"),
                )
            } else {
                e
            }
        })?;
        Ok(Driver {
            iface: iface.to_string(),
            _claim: claim,
            responder: None,
            pending: Vec::new(),
            refused: 0,
        })
    }

    /// Holds `frame` from `from` for refusal (when there is room).
    #[cold]
    pub fn hold(&mut self, from: &super::Loc, frame: &[u8]) {
        if self.pending.len() < PENDING_MAX {
            self.pending.push((from.clone(), frame.to_vec()));
        }
    }

    /// Whether some endpoint of this host holds id `id` on the interface.
    pub fn is_open(&self, id: u8) -> bool {
        let Ok(addr) = name(&self.iface, &id.to_string()) else {
            return true;
        };
        match UnixDatagram::unbound() {
            Ok(s) => s.connect_addr(&addr).is_ok(),
            // Cannot tell: refusing an open endpoint's frames would end its peers'
            // requests, so answer nothing.
            Err(_) => true,
        }
    }

    /// Whether this endpoint answers for the interface: it holds the responder's name,
    /// or takes it now (its holder closed, or there was none yet).
    pub fn answers(&mut self) -> bool {
        if self.responder.is_none() {
            self.responder = name(&self.iface, "driver")
                .and_then(|a| UnixDatagram::bind_addr(&a))
                .ok();
        }
        self.responder.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claims, the check of another id, one responder at a time, and a claim's end.
    /// Abstract names need no privilege, and the interface name is the test's own.
    #[test]
    fn claims_and_one_responder() {
        let iface = format!("test{}", std::process::id());
        let mut a = Driver::open(&iface, 3).unwrap();
        let e = Driver::open(&iface, 3).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
        let mut b = Driver::open(&iface, 4).unwrap();
        assert!(a.is_open(3) && a.is_open(4) && !a.is_open(5));
        assert!(a.answers());
        assert!(!b.answers(), "one responder per interface");
        drop(a);
        assert!(!b.is_open(3), "a claim ends with its endpoint");
        assert!(b.answers(), "another takes over");
        let _c = Driver::open(&iface, 3).unwrap();
        assert!(b.is_open(3));
    }
}
