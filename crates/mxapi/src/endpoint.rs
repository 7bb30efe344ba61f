//! Open endpoints: the table the handles index, `mx_open_endpoint` and its
//! parameters, closing, waking and progression.
//!
//! A handle (`mx_endpoint_t`) is a token: a number that is looked up in the table and
//! never dereferenced, so a NULL, forged or closed handle gets `MX_BAD_ENDPOINT`.
//! Tokens are not reused. Which `myrix-mx` endpoint a board opens depends on
//! `MYRIX_MX_TRANSPORT` ([`crate::init::Mode`]): a `shm` endpoint, whose id is the
//! shared-memory segment's, so endpoint ids are unique per host (not per board, as in
//! MX); `omx+shm:IFACE` (the same segment, plus Open-MX's frames on the board's
//! interface for other hosts); `omx+nic:IFACE` (`MX_DISABLE_SHMEM`: Open-MX's frames
//! to every peer, this host's through the interface) or `eth:IFACE` (myrix's frames
//! on raw Ethernet alone).

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use myrix_mx::{Config, Endpoint, MxError, OmxEndpoint, OmxMxWireEndpoint, PeerId, Request};

use crate::init::{fail, fail_with, guard, lock, need_init, Mode};
use crate::mxep::MxEp;
use crate::naming;
use crate::types::*;

/// What a request handle refers to.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A send to this address.
    Send {
        dest: mx_endpoint_addr_t,
    },
    Recv,
    /// A connect to this NIC and endpoint id, completing with this match value.
    Connect {
        nic: u64,
        eid: u8,
        match_info: u64,
    },
}

/// One request handle's entry.
#[derive(Clone, Copy, Debug)]
pub struct Req {
    pub r: Request,
    pub kind: Kind,
    /// The program's context pointer, as an integer.
    pub ctx: usize,
}

/// What the C interface knows of a peer: the NIC id and endpoint id programs see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerName {
    pub nic: u64,
    pub eid: u8,
}

/// Peers by id and by name, shared with the unexpected handler.
#[derive(Default, Debug)]
pub struct Book {
    pub by_id: HashMap<PeerId, PeerName>,
    pub by_name: HashMap<(u64, u8), PeerId>,
}

impl Book {
    pub fn insert(&mut self, p: PeerId, name: PeerName) {
        self.by_id.insert(p, name);
        self.by_name.insert((name.nic, name.eid), p);
    }
}

/// An open endpoint.
pub struct Ep {
    pub mx: MxEp,
    /// The endpoints of this host are reached through shared memory (peers of other
    /// hosts through `mx`'s raw Ethernet): an `omx+shm:` endpoint.
    pub shm_local: bool,
    /// The claim on the endpoint id of an endpoint without a shared-memory segment
    /// (which claims it otherwise); see [`claim`].
    _claim: Option<std::os::unix::net::UnixDatagram>,
    /// The instance number in addresses this endpoint hands out.
    pub inst: u16,
    pub board: u32,
    /// The board's NIC id (a MAC).
    pub nic: u64,
    pub eid: u8,
    pub key: u32,
    pub handler: mx_error_handler_t,
    /// `MX_PARAM_CONTEXT_ID`: the match bits every receive mask must cover.
    pub context_mask: u64,
    pub reqs: HashMap<usize, Req>,
    pub by_req: HashMap<Request, usize>,
    pub book: Arc<Mutex<Book>>,
    next_req: usize,
}

impl Ep {
    /// A failed call on this endpoint: its handler decides.
    pub fn fail(&self, code: mx_return_t, what: &str) -> mx_return_t {
        fail_with(self.handler, code, what)
    }

    /// Files a new request; returns its handle.
    pub fn add(&mut self, r: Request, kind: Kind, ctx: *mut c_void) -> mx_request_t {
        self.next_req += 1;
        // Handle: endpoint instance in the top bits (so `mx_context`, which gets no
        // endpoint, finds it), a count below; never 0.
        let token = ((self.inst as usize) << 40) | (self.next_req & 0xff_ffff_ffff);
        self.reqs.insert(
            token,
            Req {
                r,
                kind,
                ctx: ctx as usize,
            },
        );
        self.by_req.insert(r, token);
        token as mx_request_t
    }

    /// Takes a request off the table (it completed or was forgotten).
    pub fn remove(&mut self, token: usize) -> Option<Req> {
        let q = self.reqs.remove(&token)?;
        self.by_req.remove(&q.r);
        Some(q)
    }

    /// Receive masks must cover the context-id bits.
    pub fn check_context_mask(&self, mask: u64, what: &str) -> Result<(), mx_return_t> {
        if mask & self.context_mask != self.context_mask {
            return Err(self.fail(
                ret::BAD_MATCHING_FOR_CONTEXT_ID_MASK,
                &format!(
                    "{what}: mask {mask:#x} does not cover the context id bits {:#x}",
                    self.context_mask
                ),
            ));
        }
        Ok(())
    }
}

/// A table entry: the endpoint, and its wake-up count (`mx_wakeup` bumps it without
/// the lock; every blocking call that started before ends).
pub struct Entry {
    pub ep: Mutex<Ep>,
    pub wake: AtomicU64,
    /// Threads waiting for `ep`'s lock: a blocking call lets them have it between its
    /// slices (the lock is not fair: released and taken again at once, it would
    /// starve them).
    pub want: AtomicU32,
}

#[derive(Default)]
struct Table {
    eps: HashMap<usize, Arc<Entry>>,
    next: usize,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

thread_local! {
    /// Set while this thread runs the program's unexpected handler: the endpoint is
    /// locked, and calls on it are refused rather than deadlock.
    pub static IN_HANDLER: Cell<bool> = const { Cell::new(false) };
}

fn token_inst(token: usize) -> usize {
    token >> 4
}

/// The entry of a handle.
pub fn entry(handle: mx_endpoint_t) -> Option<Arc<Entry>> {
    let t = handle as usize;
    if t == 0 || t & 0xf != 0x8 {
        return None;
    }
    lock(&TABLE).as_ref()?.eps.get(&token_inst(t)).cloned()
}

/// The entry of an endpoint instance (from an address or a request handle).
pub fn entry_of_inst(inst: u16) -> Option<Arc<Entry>> {
    lock(&TABLE).as_ref()?.eps.get(&(inst as usize)).cloned()
}

/// Runs `f` on the endpoint of `handle`, locked; `MX_BAD_ENDPOINT` (through the
/// handler) for a handle that is not an open endpoint.
pub fn with_ep(
    handle: mx_endpoint_t,
    name: &str,
    f: impl FnOnce(&mut Ep, &Entry) -> mx_return_t,
) -> mx_return_t {
    if let Err(e) = need_init(name) {
        return e;
    }
    let Some(e) = entry(handle) else {
        return fail(ret::BAD_ENDPOINT, &format!("{name}: not an open endpoint"));
    };
    if IN_HANDLER.with(|h| h.get()) {
        let code = if name == "mx_close_endpoint" {
            ret::CLOSE_IN_HANDLER
        } else {
            ret::BUSY
        };
        return fail(code, &format!("{name}: called from the unexpected handler"));
    }
    e.want.fetch_add(1, Ordering::AcqRel);
    let mut ep = lock(&e.ep);
    e.want.fetch_sub(1, Ordering::AcqRel);
    f(&mut ep, &e)
}

/// Closes every endpoint (`mx_finalize`).
pub fn close_all() {
    let eps: Vec<Arc<Entry>> = match lock(&TABLE).as_mut() {
        Some(t) => t.eps.drain().map(|(_, e)| e).collect(),
        None => Vec::new(),
    };
    for e in eps {
        let mut ep = lock(&e.ep);
        let _ = ep.mx.flush_all(std::time::Duration::from_millis(100));
    }
}

/// What `myrix-mx` errors become.
pub fn code_of(e: &MxError) -> mx_return_t {
    use myrix_mx::Error as E;
    match e {
        MxError::Engine(E::BadMatchMask { .. }) => ret::BAD_MATCH_MASK,
        // A message over the engine's limit (1 GiB): MX has no closer code.
        MxError::Engine(E::TooLarge { .. }) => ret::NO_RESOURCES,
        MxError::Engine(E::UnknownPeer(_) | E::NotConnected(_)) => ret::CONNECTION_FAILED,
        MxError::Engine(E::BadRequest) => ret::BAD_REQUEST,
        MxError::Engine(E::TooManyRequests | E::TooManyPeers) => ret::NO_RESOURCES,
        MxError::Engine(E::NotCancellable) => ret::CANCEL_NOT_SUPPORTED,
        MxError::Timeout => ret::TIMEOUT,
        MxError::Connect { code, .. } => match code {
            myrix_mx::Code::BadKey => ret::BAD_CONNECTION_KEY,
            myrix_mx::Code::Unreachable => ret::TIMEOUT,
            _ => ret::CONNECTION_FAILED,
        },
        MxError::PeerLost | MxError::Transport(_) => ret::CONNECTION_FAILED,
        MxError::Io(_) | MxError::Board(_) | MxError::Tag(_) => ret::FAILURE,
    }
}

/// The endpoint's parameters, read from `mx_param_t`s.
struct Params {
    handler: mx_error_handler_t,
    unexp_max: Option<u32>,
    context_mask: u64,
}

fn read_params(params: *const mx_param_t, count: u32) -> Result<Params, mx_return_t> {
    let mut p = Params {
        handler: None,
        unexp_max: None,
        context_mask: 0,
    };
    if count == 0 {
        return Ok(p);
    }
    if params.is_null() || count > 64 {
        return Err(fail(
            ret::BAD_PARAM_LIST,
            "mx_open_endpoint: bad parameter list",
        ));
    }
    for i in 0..count as usize {
        // SAFETY: the caller passes `count` parameters at `params` (non-NULL, checked);
        // `read_unaligned` copes with any alignment.
        let one = unsafe { params.add(i).read_unaligned() };
        match one.key {
            MX_PARAM_ERROR_HANDLER => {
                // SAFETY: the key says the program set the handler member, to a
                // function of the handler type or NULL (None).
                p.handler = unsafe { one.val.error_handler }
            }
            MX_PARAM_UNEXP_QUEUE_MAX => {
                // SAFETY: the key says the program set this member; any u32 is valid.
                p.unexp_max = Some(unsafe { one.val.unexp_queue_max })
            }
            MX_PARAM_CONTEXT_ID => {
                // SAFETY: the key says the program set this member; any two bytes are
                // valid.
                let c = unsafe { one.val.context_id };
                if c.bits > MX_CONTEXT_ID_BITS_MAX || c.bits as u32 + c.shift as u32 > 64 {
                    return Err(fail(
                        ret::BAD_PARAM_VAL,
                        &format!(
                            "mx_open_endpoint: context id of {} bits at {}",
                            c.bits, c.shift
                        ),
                    ));
                }
                p.context_mask = if c.bits == 0 {
                    0
                } else {
                    (u64::MAX >> (64 - c.bits as u32)) << c.shift
                };
            }
            k => {
                return Err(fail(
                    ret::BAD_PARAM_NAME,
                    &format!("mx_open_endpoint: unknown parameter key {k}"),
                ))
            }
        }
    }
    Ok(p)
}

/// Claims endpoint id `eid` on interface `iface` for this process: a socket bound to an
/// abstract Unix address, which lives as long as the process and, like the interface,
/// belongs to the network namespace. Raw Ethernet alone cannot tell that another
/// process of the host opened the same id on the interface (each socket sees every
/// frame); shared memory's segment is the claim otherwise.
fn claim(iface: &str, eid: u8) -> Result<std::os::unix::net::UnixDatagram, MxError> {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("myrix-mx-endpoint-{iface}-{eid}");
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    Ok(std::os::unix::net::UnixDatagram::bind_addr(&addr)?)
}

/// An endpoint as [`open`] opens it: the `myrix-mx` endpoint, whether local peers go
/// through shared memory beside raw Ethernet, the claim on its id.
type Opened = (MxEp, bool, Option<std::os::unix::net::UnixDatagram>);

/// Opens the `myrix-mx` endpoint of board `board` as `MYRIX_MX_TRANSPORT` says.
fn open(board: u32, eid: u8, key: u32, p: &Params) -> Result<Opened, MxError> {
    let mut cfg = Config::default();
    if let Some(m) = p.unexp_max {
        cfg.unexpected_max = m.max(1) as usize;
    }
    let env = crate::init::env();
    let iface = naming::board(board)
        .map(|b| b.iface)
        .filter(|i| i != "local");
    let shm = |cfg| {
        let ep = Endpoint::open_with("shm", eid, key, cfg)?;
        Ok((MxEp::Mx(ep), false, None))
    };
    let Some(iface) = iface else {
        // The host-only board: shared memory whatever the mode.
        return shm(cfg);
    };
    // Open-MX's frames on the board's interface; local peers through shared memory
    // unless MX_DISABLE_SHMEM sends them through the NIC too.
    let omx = |cfg| -> Result<Opened, MxError> {
        let (board, shm_local, c) = if env.disable_shmem {
            (format!("omx+nic:{iface}"), false, Some(claim(&iface, eid)?))
        } else {
            (format!("omx+shm:{iface}"), true, None)
        };
        let ep = if env.mx_wire {
            MxEp::OmxMx(OmxMxWireEndpoint::open_omx_with(&board, eid, key, cfg)?)
        } else {
            MxEp::Omx(OmxEndpoint::open_omx_with(&board, eid, key, cfg)?)
        };
        Ok((ep, shm_local, c))
    };
    match env.mode {
        Mode::Shm => shm(cfg),
        Mode::Eth => {
            let c = claim(&iface, eid)?;
            let ep = Endpoint::open_with(&format!("eth:{iface}"), eid, key, cfg)?;
            Ok((MxEp::Mx(ep), false, Some(c)))
        }
        Mode::Omx => omx(cfg),
        Mode::Auto if naming::has_remote_peers() || env.disable_shmem => {
            match omx(cfg.clone()) {
                // No CAP_NET_RAW: this host's peers are still reachable.
                Err(MxError::Io(e)) if e.kind() == std::io::ErrorKind::PermissionDenied => shm(cfg),
                r => r,
            }
        }
        Mode::Auto => shm(cfg),
    }
}

#[no_mangle]
pub unsafe extern "C" fn mx_open_endpoint(
    board_number: u32,
    endpoint_id: u32,
    endpoint_key: u32,
    params_array: *mut mx_param_t,
    params_count: u32,
    endpoint: *mut mx_endpoint_t,
) -> mx_return_t {
    guard("mx_open_endpoint", || {
        if let Err(e) = need_init("mx_open_endpoint") {
            return e;
        }
        let p = match read_params(params_array, params_count) {
            Ok(p) => p,
            Err(e) => return e,
        };
        let fail =
            |code, what: &str| fail_with(p.handler, code, &format!("mx_open_endpoint: {what}"));
        if endpoint.is_null() {
            return fail(ret::BAD_ENDPOINT, "NULL endpoint pointer");
        }
        let board = if board_number == MX_ANY_NIC {
            0
        } else {
            board_number
        };
        let Some(b) = naming::board(board) else {
            return fail(ret::BOARD_UNKNOWN, &format!("no board {board_number}"));
        };
        let ids: Vec<u8> = if endpoint_id == MX_ANY_ENDPOINT {
            // The first free id from 100 up (then below, then above 199): the low ids
            // are the ones programs ask for by number (mx_pingpong's default is 1),
            // and myrix's own tests use ids in the 60s and 200s.
            (100..=199).chain(0..100).chain(200..=255).collect()
        } else if endpoint_id <= 255 {
            vec![endpoint_id as u8]
        } else {
            return fail(
                ret::BAD_ENDPOINT_ID,
                &format!("endpoint id {endpoint_id} is over 255"),
            );
        };
        let mut last = None;
        let mut opened = None;
        for id in ids {
            match open(board, id, endpoint_key, &p) {
                Ok(mx) => {
                    opened = Some((id, mx));
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let Some((eid, (mx, shm_local, claim))) = opened else {
            let busy =
                matches!(&last, Some(MxError::Io(e)) if e.kind() == std::io::ErrorKind::AddrInUse);
            let code = if busy { ret::BUSY } else { ret::NO_RESOURCES };
            let why = last.map(|e| e.to_string()).unwrap_or_default();
            return fail(
                code,
                &format!("endpoint {endpoint_id} on board {board}: {why}"),
            );
        };
        let mut table = lock(&TABLE);
        let t = table.get_or_insert_with(Table::default);
        t.next += 1;
        if t.next > u16::MAX as usize {
            return fail(ret::NO_RESOURCES, "too many endpoints opened");
        }
        let inst = t.next;
        let ep = Ep {
            mx,
            shm_local,
            _claim: claim,
            inst: inst as u16,
            board,
            nic: b.nic,
            eid,
            key: endpoint_key,
            handler: p.handler,
            context_mask: p.context_mask,
            reqs: HashMap::new(),
            by_req: HashMap::new(),
            book: Arc::default(),
            next_req: 0,
        };
        t.eps.insert(
            inst,
            Arc::new(Entry {
                ep: Mutex::new(ep),
                wake: AtomicU64::new(0),
                want: AtomicU32::new(0),
            }),
        );
        // SAFETY: `endpoint` is non-NULL (checked) and points to the caller's handle.
        unsafe { endpoint.write(((inst << 4) | 0x8) as mx_endpoint_t) };
        ret::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn mx_close_endpoint(endpoint: mx_endpoint_t) -> mx_return_t {
    guard("mx_close_endpoint", || {
        let r = with_ep(endpoint, "mx_close_endpoint", |ep, _| {
            // Let the last acknowledgements out, so the peer does not resend.
            let _ = ep.mx.flush_all(std::time::Duration::from_millis(100));
            ret::SUCCESS
        });
        if r == ret::SUCCESS {
            if let Some(t) = lock(&TABLE).as_mut() {
                t.eps.remove(&token_inst(endpoint as usize));
            }
        }
        r
    })
}

#[no_mangle]
pub extern "C" fn mx_wakeup(endpoint: mx_endpoint_t) -> mx_return_t {
    guard("mx_wakeup", || {
        if let Err(e) = need_init("mx_wakeup") {
            return e;
        }
        // Without the endpoint's lock: the thread to wake holds it.
        match entry(endpoint) {
            Some(e) => {
                e.wake.fetch_add(1, Ordering::AcqRel);
                ret::SUCCESS
            }
            None => fail(ret::BAD_ENDPOINT, "mx_wakeup: not an open endpoint"),
        }
    })
}

#[no_mangle]
pub extern "C" fn mx_progress(endpoint: mx_endpoint_t) -> mx_return_t {
    guard("mx_progress", || {
        with_ep(endpoint, "mx_progress", |ep, _| match ep.mx.progress() {
            Ok(_) => ret::SUCCESS,
            Err(e) => ep.fail(code_of(&e), &format!("mx_progress: {e}")),
        })
    })
}

/// Progress happens only inside calls (there is no progress thread), so there is
/// nothing to disable: the call checks its handle and succeeds.
#[no_mangle]
pub extern "C" fn mx_disable_progression(endpoint: mx_endpoint_t) -> mx_return_t {
    guard("mx_disable_progression", || {
        with_ep(endpoint, "mx_disable_progression", |_, _| ret::SUCCESS)
    })
}

#[no_mangle]
pub extern "C" fn mx_reenable_progression(endpoint: mx_endpoint_t) -> mx_return_t {
    guard("mx_reenable_progression", || {
        with_ep(endpoint, "mx_reenable_progression", |_, _| ret::SUCCESS)
    })
}
