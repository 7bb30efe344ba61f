//! Endpoint addresses, connecting, and address contexts.
//!
//! An `mx_endpoint_addr_t` holds, in its two 64-bit words:
//!
//! ```text
//! stuff[0]: bits 0-47 NIC id (the board's MAC), bits 48-55 endpoint id
//! stuff[1]: bits 0-15 the endpoint instance that made it, bits 16-31 the peer's id
//!           there plus one (0: none yet), bits 32-63 the session (this endpoint's
//!           own for its own address, else 0)
//! ```
//!
//! A send to an address made by the same endpoint goes to the peer it names; any other
//! address is looked up by NIC and endpoint id among the peers this endpoint
//! connected to, and one's own address needs no `mx_connect` (the endpoint connects to
//! itself the first time).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;
use std::time::Duration;

use myrix_mx::transport::shm::{host_nic, segment_name};
use myrix_mx::{Endpoint, EndpointAddr, PeerId, Request};

use crate::complete::blocking;
use crate::endpoint::{code_of, with_ep, Ep, Kind, PeerName};
use crate::init::{fail, guard, lock, need_init};
use crate::naming;
use crate::types::*;

const NIC_MASK: u64 = (1 << 48) - 1;

/// An address from its parts.
pub fn make(
    nic: u64,
    eid: u8,
    inst: u16,
    peer: Option<PeerId>,
    session: u32,
) -> mx_endpoint_addr_t {
    let p = peer.map_or(0, |p| p.0 as u64 + 1) & 0xffff;
    mx_endpoint_addr_t {
        stuff: [
            (nic & NIC_MASK) | (eid as u64) << 48,
            inst as u64 | p << 16 | (session as u64) << 32,
        ],
    }
}

pub fn nic(a: &mx_endpoint_addr_t) -> u64 {
    a.stuff[0] & NIC_MASK
}
pub fn eid(a: &mx_endpoint_addr_t) -> u8 {
    (a.stuff[0] >> 48) as u8
}
pub fn inst(a: &mx_endpoint_addr_t) -> u16 {
    a.stuff[1] as u16
}
pub fn peer(a: &mx_endpoint_addr_t) -> Option<PeerId> {
    let p = (a.stuff[1] >> 16) as u16;
    p.checked_sub(1).map(PeerId)
}
pub fn session(a: &mx_endpoint_addr_t) -> u32 {
    (a.stuff[1] >> 32) as u32
}

impl Ep {
    /// This endpoint's own address.
    pub fn own_addr(&self) -> mx_endpoint_addr_t {
        let me = lock(&self.book).by_name.get(&(self.nic, self.eid)).copied();
        make(self.nic, self.eid, self.inst, me, self.mx.addr().session)
    }

    /// The name programs see for a peer of this endpoint: recorded at connect, or the
    /// engine's identity (a peer on this host is shown with this endpoint's board).
    pub fn peer_name(&self, p: PeerId) -> PeerName {
        if let Some(n) = lock(&self.book).by_id.get(&p) {
            return *n;
        }
        // Over shared memory alone every peer is on this host's board (the engine's
        // NIC id there is the host's, not a board's); with raw Ethernet (`eth`, `omx`,
        // `omx+shm`) the engine's NIC id is the peer's MAC, local peers' too.
        let eth = self.mx.addr().transport() != "shm";
        let (nic, eid) = match self.mx.peer_identity(p) {
            Some((n, e)) if eth => (n, e),
            Some((_, e)) => (self.nic, e),
            None => (self.nic, 0),
        };
        let name = PeerName { nic, eid };
        lock(&self.book).insert(p, name);
        name
    }

    /// The address of a peer of this endpoint.
    pub fn addr_of(&self, p: PeerId) -> mx_endpoint_addr_t {
        let n = self.peer_name(p);
        let session = if (n.nic, n.eid) == (self.nic, self.eid) {
            self.mx.addr().session
        } else {
            0
        };
        make(n.nic, n.eid, self.inst, Some(p), session)
    }

    /// The `myrix-mx` address of endpoint `eid` on the board with NIC id `nic`. Over
    /// shared memory alone, boards of this host; over raw Ethernet alone (`eth`,
    /// `omx`), every NIC id of the peer table (its MAC); with both (`omx+shm`), as
    /// Open-MX does, shared memory for a NIC id of this host and Open-MX's frames for
    /// the others.
    fn target(&self, nic: u64, eid: u8, what: &str) -> Result<EndpointAddr, mx_return_t> {
        let own = self.mx.addr();
        let kind = own.transport();
        if kind == "shm" || (self.shm_local && naming::local_board(nic).is_some()) {
            if naming::local_board(nic).is_none() {
                let code = if naming::hostname_of(nic).is_some() {
                    ret::CONNECTION_FAILED
                } else {
                    ret::NIC_NOT_FOUND
                };
                return Err(self.fail(
                    code,
                    &format!(
                        "{what}: NIC {} is not a board of this host (only local peers are reachable over shared memory alone; MYRIX_MX_TRANSPORT=auto with a peers file, or omx, reaches others)",
                        naming::format_mac(nic)
                    ),
                ));
            }
            // Endpoint ids are the host's: the same id on another board is this one.
            if eid == self.eid {
                return Ok(own.clone());
            }
            // The segment is named by the host, not the board: the engine's NIC id in
            // the address is the one the peer's frames will carry (its board's MAC
            // with raw Ethernet beside, the host's over shared memory alone).
            let (peer_nic, seg_nic) = if kind == "shm" {
                (own.nic, own.nic)
            } else {
                (nic, host_nic())
            };
            return Ok(EndpointAddr {
                nic: peer_nic,
                endpoint: eid,
                session: 0,
                locator: format!("shm:{}", segment_name(seg_nic, eid)),
            });
        }
        if (nic, eid) == (self.nic, self.eid) {
            return Ok(own.clone());
        }
        if naming::hostname_of(nic).is_none() {
            return Err(self.fail(
                ret::NIC_NOT_FOUND,
                &format!(
                    "{what}: NIC {} is not in the peer table",
                    naming::format_mac(nic)
                ),
            ));
        }
        Ok(EndpointAddr {
            nic,
            endpoint: eid,
            session: 0,
            locator: format!("{kind}:{nic:012x}"),
        })
    }

    /// Connects (blocking) to endpoint `eid` of board `nic`.
    pub fn connect(
        &mut self,
        nic: u64,
        eid: u8,
        key: u32,
        timeout: Duration,
        what: &str,
    ) -> Result<PeerId, mx_return_t> {
        let target = self.target(nic, eid, what)?;
        match self.mx.connect(&target, key, timeout) {
            Ok(p) => {
                lock(&self.book).insert(p, PeerName { nic, eid });
                Ok(p)
            }
            Err(e) => Err(self.fail(connect_code(&e), &format!("{what}: {e}"))),
        }
    }

    /// Starts connecting to endpoint `eid` of board `nic`.
    fn start_connect(
        &mut self,
        nic: u64,
        eid: u8,
        key: u32,
        what: &str,
    ) -> Result<Request, mx_return_t> {
        let target = self.target(nic, eid, what)?;
        self.mx
            .iconnect(&target, key)
            .map_err(|e| self.fail(connect_code(&e), &format!("{what}: {e}")))
    }

    /// The peer a send to `a` goes to.
    pub fn resolve(&mut self, a: &mx_endpoint_addr_t, what: &str) -> Result<PeerId, mx_return_t> {
        if inst(a) == self.inst {
            if let Some(p) = peer(a) {
                if lock(&self.book).by_id.contains_key(&p) || self.mx.peer_identity(p).is_some() {
                    return Ok(p);
                }
                return Err(self.fail(
                    ret::BAD_ENDPOINT,
                    &format!("{what}: unknown peer in address"),
                ));
            }
        }
        let known = lock(&self.book).by_name.get(&(nic(a), eid(a))).copied();
        if let Some(p) = known {
            return Ok(p);
        }
        if (nic(a), eid(a)) == (self.nic, self.eid) {
            // One's own address: no mx_connect needed.
            let key = self.key;
            return self.connect(self.nic, self.eid, key, Duration::from_secs(5), what);
        }
        Err(self.fail(
            ret::BAD_ENDPOINT,
            &format!("{what}: address of an endpoint this one never connected to"),
        ))
    }
}

/// What a failed connect returns: no shared-memory segment for the endpoint id (the
/// transport cannot reach it) is `MX_CONNECTION_FAILED`, as a closed endpoint is.
fn connect_code(e: &myrix_mx::MxError) -> mx_return_t {
    match e {
        myrix_mx::MxError::Io(_) => ret::CONNECTION_FAILED,
        e => code_of(e),
    }
}

/// A timeout in milliseconds, `MX_INFINITE` (0) being for ever (a day here).
pub fn timeout(ms: u32) -> Duration {
    if ms == MX_INFINITE {
        Duration::from_secs(86_400)
    } else {
        Duration::from_millis(ms as u64)
    }
}

fn eid_arg(ep: &Ep, endpoint_id: u32, what: &str) -> Result<u8, mx_return_t> {
    u8::try_from(endpoint_id).map_err(|_| {
        ep.fail(
            ret::BAD_ENDPOINT_ID,
            &format!("{what}: endpoint id {endpoint_id} is over 255"),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_connect(
    endpoint: mx_endpoint_t,
    nic_id: u64,
    endpoint_id: u32,
    key: u32,
    timeout_ms: u32,
    addr: *mut mx_endpoint_addr_t,
) -> mx_return_t {
    guard("mx_connect", || {
        let mut started = None;
        let first = with_ep(endpoint, "mx_connect", |ep, _| {
            if addr.is_null() {
                return ep.fail(ret::BAD_INFO_VAL, "mx_connect: NULL address pointer");
            }
            let eid = match eid_arg(ep, endpoint_id, "mx_connect") {
                Ok(e) => e,
                Err(r) => return r,
            };
            let r = match ep.start_connect(nic_id, eid, key, "mx_connect") {
                Ok(r) => r,
                Err(e) => return e,
            };
            started = Some((r, eid));
            ret::SUCCESS
        });
        let Some((r, eid)) = started else {
            return first;
        };
        // Waits in slices, so other threads get the endpoint and mx_wakeup ends it.
        let mut result = 0u32;
        let mut outcome = ret::TIMEOUT;
        let waited = blocking(
            endpoint,
            "mx_connect",
            timeout_ms,
            &mut result,
            |ep, slice| {
                match ep.mx.wait(r, slice) {
                    Ok(Some((st, _))) => {
                        Some(match Endpoint::connected(&ep.mx.addr().clone(), st) {
                            Ok(p) => {
                                lock(&ep.book).insert(p, PeerName { nic: nic_id, eid });
                                // SAFETY: `addr` is non-NULL (checked) and points to the caller's address.
                                unsafe { addr.write(ep.addr_of(p)) };
                                outcome = ret::SUCCESS;
                                ret::SUCCESS
                            }
                            Err(e) => {
                                outcome = ep.fail(code_of(&e), &format!("mx_connect: {e}"));
                                outcome
                            }
                        })
                    }
                    Ok(None) => None,
                    Err(e) => {
                        outcome = ep.fail(code_of(&e), &format!("mx_connect: {e}"));
                        Some(outcome)
                    }
                }
            },
        );
        if waited != ret::SUCCESS {
            return waited;
        }
        if result == 0 && outcome == ret::TIMEOUT {
            // Timed out or woken: the connect is given up.
            let _ = with_ep(endpoint, "mx_connect", |ep, _| {
                let _ = ep.mx.forget(r);
                ret::SUCCESS
            });
            return with_ep(endpoint, "mx_connect", |ep, _| {
                ep.fail(ret::TIMEOUT, "mx_connect: timed out")
            });
        }
        outcome
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_iconnect(
    endpoint: mx_endpoint_t,
    nic_id: u64,
    endpoint_id: u32,
    key: u32,
    match_info: u64,
    context: *mut c_void,
    request: *mut mx_request_t,
) -> mx_return_t {
    guard("mx_iconnect", || {
        with_ep(endpoint, "mx_iconnect", |ep, _| {
            if request.is_null() {
                return ep.fail(ret::BAD_REQUEST, "mx_iconnect: NULL request pointer");
            }
            let eid = match eid_arg(ep, endpoint_id, "mx_iconnect") {
                Ok(e) => e,
                Err(r) => return r,
            };
            let target = match ep.target(nic_id, eid, "mx_iconnect") {
                Ok(t) => t,
                Err(r) => return r,
            };
            match ep.mx.iconnect(&target, key) {
                Ok(r) => {
                    let kind = Kind::Connect {
                        nic: nic_id,
                        eid,
                        match_info,
                    };
                    let h = ep.add(r, kind, context);
                    // SAFETY: `request` is non-NULL (checked) and points to the caller's handle.
                    unsafe { request.write(h) };
                    ret::SUCCESS
                }
                Err(e) => ep.fail(connect_code(&e), &format!("mx_iconnect: {e}")),
            }
        })
    })
}

#[no_mangle]
pub extern "C" fn mx_disconnect(endpoint: mx_endpoint_t, addr: mx_endpoint_addr_t) -> mx_return_t {
    guard("mx_disconnect", || {
        with_ep(endpoint, "mx_disconnect", |ep, _| {
            let p = match ep.resolve(&addr, "mx_disconnect") {
                Ok(p) => p,
                Err(r) => return r,
            };
            match ep.mx.disconnect(p) {
                Ok(()) => {
                    let mut book = lock(&ep.book);
                    if let Some(n) = book.by_id.remove(&p) {
                        book.by_name.remove(&(n.nic, n.eid));
                    }
                    ret::SUCCESS
                }
                Err(e) => ep.fail(code_of(&e), &format!("mx_disconnect: {e}")),
            }
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_get_endpoint_addr(
    endpoint: mx_endpoint_t,
    addr: *mut mx_endpoint_addr_t,
) -> mx_return_t {
    guard("mx_get_endpoint_addr", || {
        with_ep(endpoint, "mx_get_endpoint_addr", |ep, _| {
            if addr.is_null() {
                return ep.fail(
                    ret::BAD_INFO_VAL,
                    "mx_get_endpoint_addr: NULL address pointer",
                );
            }
            // SAFETY: `addr` is non-NULL (checked) and points to the caller's address.
            unsafe { addr.write(ep.own_addr()) };
            ret::SUCCESS
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_decompose_endpoint_addr(
    addr: mx_endpoint_addr_t,
    nic_id: *mut u64,
    endpoint_id: *mut u32,
) -> mx_return_t {
    // SAFETY: the caller's pointers, passed on (NULL ones are checked there).
    unsafe { mx_decompose_endpoint_addr2(addr, nic_id, endpoint_id, std::ptr::null_mut()) }
}

#[no_mangle]
pub unsafe extern "C" fn mx_decompose_endpoint_addr2(
    addr: mx_endpoint_addr_t,
    nic_id: *mut u64,
    endpoint_id: *mut u32,
    session_id: *mut u32,
) -> mx_return_t {
    guard("mx_decompose_endpoint_addr", || {
        if let Err(e) = need_init("mx_decompose_endpoint_addr") {
            return e;
        }
        // SAFETY: each pointer is written only when non-NULL, and then points to the
        // caller's variable of that type.
        unsafe {
            if !nic_id.is_null() {
                nic_id.write(nic(&addr));
            }
            if !endpoint_id.is_null() {
                endpoint_id.write(eid(&addr) as u32);
            }
            if !session_id.is_null() {
                session_id.write(session(&addr));
            }
        }
        ret::SUCCESS
    })
}

/// Address contexts, by the peer an address names (NIC id, endpoint id, and the
/// endpoint instance), so every copy of an address shares one context.
static CONTEXTS: Mutex<Option<HashMap<(u64, u16), usize>>> = Mutex::new(None);

fn context_key(a: &mx_endpoint_addr_t) -> (u64, u16) {
    (a.stuff[0], inst(a))
}

#[no_mangle]
pub extern "C" fn mx_set_endpoint_addr_context(
    addr: mx_endpoint_addr_t,
    context: *mut c_void,
) -> mx_return_t {
    guard("mx_set_endpoint_addr_context", || {
        if let Err(e) = need_init("mx_set_endpoint_addr_context") {
            return e;
        }
        lock(&CONTEXTS)
            .get_or_insert_with(HashMap::new)
            .insert(context_key(&addr), context as usize);
        ret::SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_get_endpoint_addr_context(
    addr: mx_endpoint_addr_t,
    context: *mut *mut c_void,
) -> mx_return_t {
    guard("mx_get_endpoint_addr_context", || {
        if let Err(e) = need_init("mx_get_endpoint_addr_context") {
            return e;
        }
        if context.is_null() {
            return fail(
                ret::BAD_INFO_VAL,
                "mx_get_endpoint_addr_context: NULL context pointer",
            );
        }
        let c = lock(&CONTEXTS)
            .as_ref()
            .and_then(|m| m.get(&context_key(&addr)).copied())
            .unwrap_or(0);
        // SAFETY: `context` is non-NULL (checked) and points to the caller's pointer.
        unsafe { context.write(c as *mut c_void) };
        ret::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_fields_round_trip() {
        let a = make(0x02fc_0000_0001, 7, 3, Some(PeerId(5)), 0xdead_beef);
        assert_eq!(
            (nic(&a), eid(&a), inst(&a), peer(&a), session(&a)),
            (0x02fc_0000_0001, 7, 3, Some(PeerId(5)), 0xdead_beef)
        );
        let b = make(1, 0, 1, None, 0);
        assert_eq!(peer(&b), None);
    }
}
