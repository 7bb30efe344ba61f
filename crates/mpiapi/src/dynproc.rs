//! MPI's dynamic processes between jobs (MPI-5.0 §11.4–11.8): `MPI_Open_port`,
//! `MPI_Close_port`, `MPI_Comm_accept`, `MPI_Comm_connect`, `MPI_Comm_join`,
//! `MPI_Publish_name`, `MPI_Unpublish_name`, `MPI_Lookup_name`. Where ports and
//! names live and how long a root waits: `port.rs`.
//!
//! Accept and connect are collective over each side's communicator. Every member
//! contributes its card (how the fabric reaches it: `Fabric::card`) and its
//! fabric's size (where it will number the other group's processes), and the group
//! ORs its used context-id bitmaps, as `MPI_Intercomm_create` does. The roots swap
//! their groups' lists over the port's socket, then swap a verdict (so that both
//! go on or neither does), and each broadcasts the other group's list and the OR of
//! both bitmaps in its group. Each member appends the other group's processes to its
//! fabric (`Engine::add_peers`: ranks past the job's), takes the lowest free id of
//! the OR for the hidden both-groups communicator (the accepting group first), and
//! `intercomm::build` makes the intercommunicator over it, as for
//! `MPI_Intercomm_create`. `MPI_Comm_join` is the same with one process a side,
//! over the caller's socket; the side with the lower card is first.
//!
//! The fabric reaches processes of other jobs over shared memory only: the groups
//! must be on one host (a card of another node is refused by both roots, which
//! then return `MPI_ERR_OTHER`). `MPI_Comm_disconnect` retires the other group's
//! processes (their later exit is no error here).

use crate::abi::*;
use crate::coll::args::coll_code;
use crate::coll_glue::pt2pt;
use crate::comm::{self, lookup, CommRef};
use crate::ffi::{finish, mpi_fn, put};
use crate::intercomm::{build, errh, local_used_ids, merged, BITMAP};
use crate::port::{self, Wire};
use crate::runtime;
use myrix_mpi::coll;
use myrix_mpi::p2p::fabric::NewPeer;
use myrix_mpi::p2p::Fabric;
use std::os::fd::AsRawFd;
use std::os::raw::{c_char, c_int};
use std::time::Instant;

const MAGIC: &[u8; 8] = b"MYRIXDP1";
/// Bytes of one member's entry: u32 fabric size, u8 card length, the card.
const ENTRY: usize = 32;
/// The most processes a side may have.
const MAX_GROUP: usize = 1 << 16;

/// Which side of the exchange this group is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Accept,
    Connect,
    /// MPI_Comm_join: decided by the cards.
    Join,
}

fn entry(size: u32, card: &str) -> Result<[u8; ENTRY], c_int> {
    let mut e = [0u8; ENTRY];
    let b = card.as_bytes();
    if b.is_empty() || b.len() > ENTRY - 5 {
        return Err(MPI_ERR_INTERN);
    }
    e[..4].copy_from_slice(&size.to_le_bytes());
    e[4] = b.len() as u8;
    e[5..5 + b.len()].copy_from_slice(b);
    Ok(e)
}

/// (fabric size, card) of an entry, if well formed.
fn parse_entry(e: &[u8]) -> Option<(u32, String)> {
    let size = u32::from_le_bytes(e.get(..4)?.try_into().ok()?);
    let n = *e.get(4)? as usize;
    let card = std::str::from_utf8(e.get(5..5 + n)?).ok()?;
    myrix_mpi::channel::Card::decode(card)?;
    Some((size, card.to_string()))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The root's side: swaps the group lists over `wire`, checks the other one, swaps
/// verdicts. Returns (local first, the other group's entries, the OR of both
/// bitmaps).
fn roots(
    wire: &Wire,
    role: Role,
    all: &[u8],
    bits: &[u8],
) -> Result<(bool, Vec<u8>, Vec<u8>), c_int> {
    let n = all.len() / ENTRY;
    let mut mine = MAGIC.to_vec();
    mine.extend((n as u32).to_le_bytes());
    mine.extend(all);
    mine.extend(bits);
    let theirs = wire.swap(&mine)?;
    let checked = (|| {
        if theirs.get(..8) != Some(&MAGIC[..]) {
            return None;
        }
        let nr = u32_at(&theirs, 8)? as usize;
        if nr == 0 || nr > MAX_GROUP || theirs.len() != 12 + nr * ENTRY + BITMAP {
            return None;
        }
        let entries = &theirs[12..12 + nr * ENTRY];
        // Both roots check the same cards: the node of the first of each side.
        let here = myrix_mpi::channel::Card::decode(&parse_entry(&all[..ENTRY])?.1)?.node;
        for e in entries.chunks_exact(ENTRY) {
            let (_, c) = parse_entry(e)?;
            if myrix_mpi::channel::Card::decode(&c)?.node != here {
                crate::ffi::say!(
                    "myrix MPI: the other group is on another node: dynamic processes \
                     are reached over shared memory only"
                );
                return None;
            }
        }
        let or: Vec<u8> = bits
            .iter()
            .zip(&theirs[12 + nr * ENTRY..])
            .map(|(a, b)| a | b)
            .collect();
        Some((entries.to_vec(), or))
    })();
    let ok = [u8::from(checked.is_some())];
    let verdict = wire.swap(&ok)?;
    let (entries, or) = checked.ok_or(MPI_ERR_OTHER)?;
    if verdict != [1] {
        return Err(MPI_ERR_OTHER);
    }
    let local_first = match role {
        Role::Accept => true,
        Role::Connect => false,
        Role::Join => all < &entries[..],
    };
    Ok((local_first, entries, or))
}

/// Accept, connect or join, collective over `lc`; `wire` is called at `root` only
/// (with the socket it owns, if any, kept open until the roots are done).
pub(crate) fn connect_groups<K>(
    lc: CommRef,
    root: c_int,
    role: Role,
    wire: impl FnOnce() -> Result<(Wire, K), c_int>,
    errh: MPI_Errhandler,
    name: &str,
) -> Result<MPI_Comm, c_int> {
    if lc.inter.is_some() {
        return Err(MPI_ERR_COMM);
    }
    let n = lc.ranks.len();
    let root = usize::try_from(root)
        .ok()
        .filter(|&r| r < n)
        .ok_or(MPI_ERR_ROOT)?;
    let (card, size) = runtime::with(name, |rt| {
        let p = rt.p2p.as_mut().ok_or(MPI_ERR_INTERN)?;
        Ok((p.engine.fabric().card(), p.engine.size()))
    })?;
    let Some(card) = card else {
        crate::ffi::say!("myrix MPI: {name}: this process's transport cannot reach other jobs");
        return Err(MPI_ERR_UNSUPPORTED_OPERATION);
    };
    let me = lc.ranks[lc.rank as usize];
    let mine = entry(size, &card)?;
    let mut lp = pt2pt(&lc);
    // The whole agreement runs under the pool's lock, like comm.rs's.
    let mut pool = comm::pool();
    let lor = local_used_ids(&mut lp, &pool, name)?;
    let mut all = vec![0u8; ENTRY * n];
    coll::allgather(&mut lp, &mine, &mut all).map_err(|e| coll_code(&e, name))?;
    // The root's news: status, local_first, remote count; then the entries and bits.
    let mut head = [0u8; 12];
    let mut body = Vec::new();
    if lc.rank as usize == root {
        match wire().and_then(|(w, _keep)| roots(&w, role, &all, &lor)) {
            Ok((first, entries, bits)) => {
                head[4..8].copy_from_slice(&u32::from(first).to_le_bytes());
                head[8..].copy_from_slice(&((entries.len() / ENTRY) as u32).to_le_bytes());
                body = [entries, bits].concat();
            }
            Err(code) => head[..4].copy_from_slice(&(code as u32).to_le_bytes()),
        }
    }
    coll::bcast(&mut lp, root, &mut head).map_err(|e| coll_code(&e, name))?;
    let status = u32_at(&head, 0).unwrap_or(0);
    if status != 0 {
        return Err(status as c_int);
    }
    let local_first = u32_at(&head, 4) == Some(1);
    let nr = u32_at(&head, 8).unwrap_or(0) as usize;
    body.resize(nr * ENTRY + BITMAP, 0);
    coll::bcast(&mut lp, root, &mut body).map_err(|e| coll_code(&e, name))?;
    let peers = body[..nr * ENTRY]
        .chunks_exact(ENTRY)
        .map(|e| {
            let (size, card) = parse_entry(e).ok_or(MPI_ERR_INTERN)?;
            Ok(NewPeer {
                card,
                slot_there: size.checked_add(lc.rank).ok_or(MPI_ERR_INTERN)?,
            })
        })
        .collect::<Result<Vec<_>, c_int>>()?;
    let first = runtime::with(name, |rt| {
        let p = rt.p2p.as_mut().ok_or(MPI_ERR_INTERN)?;
        p.engine.add_peers(&peers).map_err(|e| {
            crate::ffi::say!("myrix MPI: {name}: {e}");
            MPI_ERR_OTHER
        })
    })?;
    let remote: Vec<u32> = (first..first + nr as u32).collect();
    let mctx = pool.take_free(&body[nr * ENTRY..]).ok_or(MPI_ERR_OTHER)?;
    drop(pool);
    let mh = merged(mctx, &lc.ranks, &remote, local_first, me)?;
    build(errh, lc.ranks.to_vec(), remote, local_first, mh, name)
}

/// A C string argument (NULL is `MPI_ERR_ARG`; longer than `max` is `too_long`).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn c_str(p: *const c_char, max: usize, too_long: c_int) -> Result<String, c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: the caller's contract.
    let s = unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes();
    if s.len() >= max {
        return Err(too_long);
    }
    String::from_utf8(s.to_vec()).map_err(|_| too_long)
}

/// Writes a port name into a caller's `MPI_MAX_PORT_NAME` buffer.
///
/// # Safety
/// `buf` is NULL or valid for `MPI_MAX_PORT_NAME` bytes.
unsafe fn put_port(buf: *mut c_char, name: &str) -> Result<(), c_int> {
    let mut len = 0;
    // SAFETY: the caller's contract for buf; len is a local.
    unsafe { crate::ffi::put_str(buf, port::MAX_PORT_NAME, &mut len, name) }
}

/// MPI_Comm_accept and MPI_Comm_connect.
///
/// # Safety
/// `port_name` is NULL or a C string (read at `root` only); `newcomm` NULL or an
/// MPI_Comm.
unsafe fn accept_connect(
    port_name: *const c_char,
    root: c_int,
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
    role: Role,
    name: &str,
) -> c_int {
    let r = (|| {
        if newcomm.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let lc = lookup(comm, name)?;
        let at_root = usize::try_from(root).is_ok_and(|r| r == lc.rank as usize);
        // The port is read at the root only (the standard: significant there).
        let pname = if at_root {
            // SAFETY: the caller's contract.
            Some(unsafe { c_str(port_name, port::MAX_PORT_NAME, MPI_ERR_PORT) }?)
        } else {
            None
        };
        let deadline = Instant::now() + port::timeout();
        let wire = || {
            let p = pname.ok_or(MPI_ERR_INTERN)?;
            let s = match role {
                Role::Accept => port::accept(&p, deadline)?,
                _ => port::connect(&p)?,
            };
            let w = Wire {
                fd: s.as_raw_fd(),
                deadline,
            };
            Ok((w, s))
        };
        let h = connect_groups(lc, root, role, wire, errh(comm), name)?;
        // SAFETY: newcomm is an MPI_Comm (checked non-NULL).
        unsafe { put(newcomm, h) }
    })();
    finish(comm, name, r)
}

mpi_fn! {
    /// A new port: a socket in this user's directory (`port.rs`).
    fn MPI_Open_port / PMPI_Open_port(_info: MPI_Info, port_name: *mut c_char) -> c_int {
        let name = "MPI_Open_port";
        let r = runtime::check(name).and_then(|()| {
            if port_name.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let p = port::open()?;
            // SAFETY: port_name is valid for MPI_MAX_PORT_NAME bytes (C contract).
            unsafe { put_port(port_name, &p) }
        });
        finish(MPI_COMM_WORLD, name, r)
    }
}

mpi_fn! {
    fn MPI_Close_port / PMPI_Close_port(port_name: *const c_char) -> c_int {
        let name = "MPI_Close_port";
        let r = runtime::check(name)
            // SAFETY: a C string by the C contract (NULL is refused).
            .and_then(|()| unsafe { c_str(port_name, port::MAX_PORT_NAME, MPI_ERR_PORT) })
            .and_then(|p| port::close(&p));
        finish(MPI_COMM_WORLD, name, r)
    }
}

mpi_fn! {
    fn MPI_Comm_accept / PMPI_Comm_accept(port_name: *const c_char, _info: MPI_Info, root: c_int, comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the C contract, forwarded.
        unsafe { accept_connect(port_name, root, comm, newcomm, Role::Accept, "MPI_Comm_accept") }
    }
}

mpi_fn! {
    fn MPI_Comm_connect / PMPI_Comm_connect(port_name: *const c_char, _info: MPI_Info, root: c_int, comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the C contract, forwarded.
        unsafe { accept_connect(port_name, root, comm, newcomm, Role::Connect, "MPI_Comm_connect") }
    }
}

mpi_fn! {
    /// An intercommunicator with the process at the other end of the connected
    /// socket `fd` (which stays the caller's).
    fn MPI_Comm_join / PMPI_Comm_join(fd: c_int, intercomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Comm_join";
        let r = (|| {
            if intercomm.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: fcntl on any integer is harmless; a bad fd is EBADF.
            if fd < 0 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
                return Err(MPI_ERR_ARG);
            }
            let lc = lookup(MPI_COMM_SELF, name)?;
            let deadline = Instant::now() + port::timeout();
            let h = connect_groups(lc, 0, Role::Join, || Ok((Wire { fd, deadline }, ())), errh(MPI_COMM_SELF), name)?;
            // SAFETY: intercomm is an MPI_Comm (checked non-NULL).
            unsafe { put(intercomm, h) }
        })();
        finish(MPI_COMM_SELF, name, r)
    }
}

mpi_fn! {
    fn MPI_Publish_name / PMPI_Publish_name(service_name: *const c_char, _info: MPI_Info, port_name: *const c_char) -> c_int {
        let name = "MPI_Publish_name";
        let r = runtime::check(name).and_then(|()| {
            // SAFETY: C strings by the C contract (NULL is refused).
            let s = unsafe { c_str(service_name, 1025, MPI_ERR_SERVICE) }?;
            // SAFETY: as above.
            let p = unsafe { c_str(port_name, port::MAX_PORT_NAME, MPI_ERR_PORT) }?;
            port::publish(&s, &p)
        });
        finish(MPI_COMM_WORLD, name, r)
    }
}

mpi_fn! {
    fn MPI_Unpublish_name / PMPI_Unpublish_name(service_name: *const c_char, _info: MPI_Info, port_name: *const c_char) -> c_int {
        let name = "MPI_Unpublish_name";
        let r = runtime::check(name).and_then(|()| {
            // SAFETY: C strings by the C contract (NULL is refused).
            let s = unsafe { c_str(service_name, 1025, MPI_ERR_SERVICE) }?;
            // SAFETY: as above.
            let p = unsafe { c_str(port_name, port::MAX_PORT_NAME, MPI_ERR_PORT) }?;
            port::unpublish(&s, &p)
        });
        finish(MPI_COMM_WORLD, name, r)
    }
}

mpi_fn! {
    fn MPI_Lookup_name / PMPI_Lookup_name(service_name: *const c_char, _info: MPI_Info, port_name: *mut c_char) -> c_int {
        let name = "MPI_Lookup_name";
        let r = runtime::check(name).and_then(|()| {
            if port_name.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: a C string by the C contract (NULL is refused).
            let s = unsafe { c_str(service_name, 1025, MPI_ERR_NAME) }?;
            let p = port::lookup(&s)?;
            // SAFETY: port_name is valid for MPI_MAX_PORT_NAME bytes (C contract).
            unsafe { put_port(port_name, &p) }
        });
        finish(MPI_COMM_WORLD, name, r)
    }
}

/// MPI_Comm_disconnect's share: the processes of other jobs in `c` (an
/// intercommunicator's remote group) are retired after its closing barrier.
pub fn retire(c: &CommRef, h: MPI_Comm) {
    crate::dynproc_spawn::forget_parent(h);
    let _ = runtime::with("MPI_Comm_disconnect", |rt| {
        let job = rt.job.size;
        if let Some(p) = rt.p2p.as_mut() {
            for &r in c.ranks.iter().filter(|&&r| r >= job) {
                p.engine.retire(r);
            }
        }
        Ok(())
    });
}

/// At MPI_Finalize: every process of another job is retired (the jobs end
/// independently) and the ports still open are closed.
pub fn at_finalize() {
    crate::dynproc_spawn::wait_children();
    let _ = runtime::with("MPI_Finalize", |rt| {
        let (job, size) = (rt.job.size, rt.p2p.as_ref().map_or(0, |p| p.engine.size()));
        if let Some(p) = rt.p2p.as_mut() {
            for r in job..size {
                p.engine.retire(r);
            }
        }
        Ok(())
    });
    port::close_all();
}
