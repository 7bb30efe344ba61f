//! Where a published segment is found: a name the kernel removes when its owner dies.
//!
//! A segment's files (control block and data) have no name in the registry directory:
//! the exporter makes them unnamed (`O_TMPFILE`) and holds them open. What names the
//! segment is an abstract Unix socket, `myrix-rsm/DEV:INO/ID` (the registry
//! directory's device and inode, so registries apart are apart), bound and listening
//! while the segment is published. The kernel releases an abstract name when the last
//! descriptor of its socket closes, and an unnamed file's memory when the last
//! descriptor or mapping goes: a process killed by SIGKILL, or every process of a job
//! killed at once, leaves nothing behind, with nobody left to clean up (issue 23).
//!
//! An importer connects to the name and says which access it wants and from which
//! node; one thread per exporting process (started with the first publication)
//! accepts, checks the access list against the importer's credentials as the kernel
//! gives them (`SO_PEERCRED`), and answers with a status and, when granted, two
//! descriptors of its own opening of the files (`/proc/self/fd`): the control block
//! read-write, the data read-only or read-write as asked. The importer has its own
//! open file description of the control block, so its test of the exporter's
//! `flock` is as before. Only the connect and the signal descriptors involve the
//! exporting process (its thread); puts and gets stay loads and stores into the
//! mapping.
//!
//! Signal descriptors are eventfds, also passed by this thread, each after it has
//! checked that the importer slot named is the caller's (the slot's claimant pid
//! against `SO_PEERCRED`): an importer that asks for a pollable descriptor makes an
//! eventfd and hands it over ([`register`]), kept for the exporter's posts to that
//! slot; an importer whose post must poke the exporter's asks for that one
//! ([`exporter_sig`]) the first time. So no signal descriptor has a name either: each
//! goes with the last process holding it (session 31; they were named FIFOs
//! `ID.sig-*` in the registry directory).
//!
//! Binding the name is atomic, so it also says "this id is in use". This module must
//! never block the serving thread without a timeout, nor trust a request beyond its
//! three words.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, RsmError, SegmentId};

use super::ctl::Ctl;
use super::mem;

const REQ_MAGIC: u32 = 0x7172_7372; // "rsrq"
/// An importer's eventfd for its slot ([`register`]).
const REG_MAGIC: u32 = 0x6773_7372; // "rssg"
/// An importer asks for the exporter's eventfd ([`exporter_sig`]).
const SIG_MAGIC: u32 = 0x6573_7372; // "rsse"
const REP_MAGIC: u32 = 0x7072_7372; // "rsrp"
/// How long the serving thread waits for one importer's request or its answer.
const SERVE_TIMEOUT: Duration = Duration::from_secs(1);
/// How long an importer waits for the exporter's thread (it may be descheduled on a
/// busy machine).
const FETCH_TIMEOUT: Duration = Duration::from_secs(20);

/// What the serving thread needs of a published segment.
pub(crate) struct Entry {
    /// The control block, locked exclusively by this open file description.
    pub(crate) ctl: File,
    pub(crate) seg: File,
    /// For new connections (republish replaces it).
    pub(crate) acl: Mutex<Acl>,
    pub(crate) owner: Credentials,
    /// The mapped control block: whose each importer slot is.
    pub(crate) ctl_map: Arc<Ctl>,
    /// The exporter's signal eventfd (its pollable descriptor), handed to importers.
    pub(crate) sig: File,
    /// The importers' signal eventfds, by slot, as they registered them.
    pub(crate) importers: Mutex<HashMap<usize, File>>,
}

fn addr(d: &Path, id: SegmentId) -> io::Result<SocketAddr> {
    let m = std::fs::metadata(d)?;
    let name = format!("myrix-rsm/{:x}:{:x}/{:08x}", m.dev(), m.ino(), id.0);
    SocketAddr::from_abstract_name(name.as_bytes())
}

/// Whether segment `id` of registry `d` is published by a live process (its name is
/// bound). Call with the directory lock held, as every binder does.
pub(crate) fn bound(d: &Path, id: SegmentId) -> bool {
    let Ok(a) = addr(d, id) else { return false };
    match UnixListener::bind_addr(&a) {
        Ok(_) => false,
        Err(e) => e.kind() == io::ErrorKind::AddrInUse,
    }
}

/// An unnamed file in the registry's file system, read-write, mode `0600`.
pub(crate) fn unnamed_file(d: &Path) -> Result<File, RsmError> {
    let tmp = OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .open(d);
    match tmp {
        Ok(f) => Ok(f),
        // A file system without O_TMPFILE: a name for a moment.
        Err(_) => {
            let p = super::registry::tmp_path(d);
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_CLOEXEC)
                .open(&p)
                .map_err(|e| mem::mem_error(&e))?;
            let _ = std::fs::remove_file(&p);
            Ok(f)
        }
    }
}

struct Server {
    pid: u32,
    epoll: OwnedFd,
    listeners: Mutex<HashMap<u64, (UnixListener, Arc<Entry>)>>,
    next: AtomicU64,
}

/// A published segment's name; dropping it unbinds the name (no new connections).
pub(crate) struct Listing {
    server: Arc<Server>,
    token: u64,
}

impl Drop for Listing {
    fn drop(&mut self) {
        // Closing the socket takes it out of the epoll set and frees the name; the
        // serving thread holds the map's lock while it accepts, so it never accepts on
        // a descriptor closed under it.
        self.server
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.token);
    }
}

/// The serving thread of this process (a child made by `fork` starts its own).
fn server() -> Result<Arc<Server>, RsmError> {
    static SERVER: Mutex<Option<Arc<Server>>> = Mutex::new(None);
    let pid = mem::whoami().2;
    let mut g = SERVER.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(s) = g.as_ref().filter(|s| s.pid == pid) {
        return Ok(s.clone());
    }
    // SAFETY: epoll_create1 takes no pointer.
    #[allow(unsafe_code)]
    let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if fd < 0 {
        return Err(mem::mem_error(&io::Error::last_os_error()));
    }
    // SAFETY: a descriptor just made, owned by nobody else.
    #[allow(unsafe_code)]
    let epoll = unsafe { OwnedFd::from_raw_fd(fd) };
    let s = Arc::new(Server {
        pid,
        epoll,
        listeners: Mutex::new(HashMap::new()),
        next: AtomicU64::new(1),
    });
    let t = s.clone();
    std::thread::Builder::new()
        .name("myrix-rsm-serve".into())
        .spawn(move || run(&t))
        .map_err(|_| RsmError::InsufficientResources)?;
    *g = Some(s.clone());
    Ok(s)
}

/// Binds segment `id`'s name and serves `entry` on it; `SegidInUse` if a live
/// process has it.
pub(crate) fn publish(d: &Path, id: SegmentId, entry: Arc<Entry>) -> Result<Listing, RsmError> {
    let a = addr(d, id).map_err(|e| mem::mem_error(&e))?;
    let l = UnixListener::bind_addr(&a).map_err(|e| match e.kind() {
        io::ErrorKind::AddrInUse => RsmError::SegidInUse,
        _ => mem::mem_error(&e),
    })?;
    l.set_nonblocking(true).map_err(|e| mem::mem_error(&e))?;
    let server = server()?;
    let token = server.next.fetch_add(1, Ordering::Relaxed);
    let fd = l.as_raw_fd();
    let mut map = server.listeners.lock().unwrap_or_else(|p| p.into_inner());
    let mut ev = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: token,
    };
    // SAFETY: both descriptors are open (the listener is in hand); `ev` is valid.
    #[allow(unsafe_code)]
    let r = unsafe { libc::epoll_ctl(server.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) };
    if r != 0 {
        return Err(mem::mem_error(&io::Error::last_os_error()));
    }
    map.insert(token, (l, entry));
    drop(map);
    Ok(Listing { server, token })
}

fn run(s: &Server) {
    const N: usize = 64;
    let mut evs = [libc::epoll_event { events: 0, u64: 0 }; N];
    loop {
        // SAFETY: `evs` holds N events; the epoll descriptor lives as long as `s`.
        #[allow(unsafe_code)]
        let n = unsafe { libc::epoll_wait(s.epoll.as_raw_fd(), evs.as_mut_ptr(), N as i32, -1) };
        if n < 0 {
            if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                std::thread::sleep(Duration::from_millis(10));
            }
            continue;
        }
        let mut work = Vec::new();
        {
            let map = s.listeners.lock().unwrap_or_else(|p| p.into_inner());
            for ev in &evs[..n as usize] {
                let token = ev.u64;
                if let Some((l, e)) = map.get(&token) {
                    while let Ok((c, _)) = l.accept() {
                        work.push((c, e.clone()));
                    }
                }
            }
        }
        for (c, e) in work {
            serve(c, &e);
        }
    }
}

/// Answers one request: an importer's connect (status 0 and the two descriptors, or
/// an RSMAPI error number), its eventfd for its slot, or its asking for the
/// exporter's (status 0 and the eventfd, or an error).
fn serve(c: UnixStream, e: &Entry) {
    let _ = c.set_read_timeout(Some(SERVE_TIMEOUT));
    let _ = c.set_write_timeout(Some(SERVE_TIMEOUT));
    let mut req = [0u8; 12];
    let Ok((n, mut fds)) = recv_fds(&c, &mut req) else {
        return;
    };
    if n == 0 || (n < req.len() && (&c).read_exact(&mut req[n..]).is_err()) {
        return;
    }
    let word =
        |i: usize| u32::from_le_bytes([req[4 * i], req[4 * i + 1], req[4 * i + 2], req[4 * i + 3]]);
    match word(0) {
        REQ_MAGIC => {
            let (perm, node) = (Perm(word(1)), NodeId(word(2)));
            let granted = (|| {
                let creds = peer_creds(&c).ok_or(RsmError::PermDenied)?.0;
                let acl = e.acl.lock().unwrap_or_else(|p| p.into_inner()).clone();
                acl.check(node, creds, e.owner, perm)?;
                let ctl = reopen(&e.ctl, true)?;
                let seg = reopen(&e.seg, perm.can_write())?;
                Ok::<_, RsmError>((ctl, seg))
            })();
            let _ = match granted {
                Ok((ctl, seg)) => send_fds(&c, &reply(0), &[ctl.as_raw_fd(), seg.as_raw_fd()]),
                Err(err) => send_fds(&c, &reply(err.code()), &[]),
            };
        }
        SIG_MAGIC if claims(&c, e, word(1)) => {
            let _ = send_fds(&c, &reply(0), &[e.sig.as_raw_fd()]);
        }
        SIG_MAGIC => {
            let _ = send_fds(&c, &reply(RsmError::PermDenied.code()), &[]);
        }
        REG_MAGIC => {
            // Only the process that claims the slot may name its descriptor.
            let slot = word(1);
            let status = match (claims(&c, e, slot), fds.pop()) {
                (true, Some(f)) if fds.is_empty() => {
                    e.importers
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(slot as usize, f);
                    0
                }
                _ => RsmError::PermDenied.code(),
            };
            let _ = send_fds(&c, &reply(status), &[]);
        }
        _ => {}
    }
}

/// Whether the peer on `c` is the process that claims importer slot `slot`.
fn claims(c: &UnixStream, e: &Entry, slot: u32) -> bool {
    peer_creds(c).is_some_and(|(_, pid)| e.ctl_map.claimant(slot as usize) == Some(pid))
}

fn reply(status: i32) -> [u8; 8] {
    let mut body = [0u8; 8];
    body[..4].copy_from_slice(&REP_MAGIC.to_le_bytes());
    body[4..].copy_from_slice(&status.to_le_bytes());
    body
}

/// A new open file description of one of our files (so an importer's `flock` test
/// is its own).
fn reopen(f: &File, write: bool) -> Result<File, RsmError> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_CLOEXEC)
        .open(format!("/proc/self/fd/{}", f.as_raw_fd()))
        .map_err(|e| mem::mem_error(&e))
}

/// The peer's user and group, and its process id.
fn peer_creds(c: &UnixStream) -> Option<(Credentials, u32)> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writing and sized for SO_PEERCRED.
    #[allow(unsafe_code)]
    let r = unsafe {
        libc::getsockopt(
            c.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (r == 0).then_some((
        Credentials {
            uid: cred.uid,
            gid: cred.gid,
        },
        cred.pid as u32,
    ))
}

/// Sends `body` (a request or a reply) with descriptors `fds` (at most three).
fn send_fds(c: &UnixStream, body: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let mut iov = libc::iovec {
        iov_base: body.as_ptr().cast_mut().cast(),
        iov_len: body.len(),
    };
    let mut cbuf = [0u64; 8];
    // SAFETY: a zeroed msghdr is a valid empty one; every pointer set below points
    // into locals that outlive the call (the body is only read), and the control
    // message is written inside `cbuf` (64 bytes, more than CMSG_SPACE of three
    // descriptors).
    #[allow(unsafe_code)]
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !fds.is_empty() {
            let bytes = std::mem::size_of_val(fds) as u32;
            msg.msg_control = cbuf.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(bytes) as _;
            let cm = libc::CMSG_FIRSTHDR(&msg);
            (*cm).cmsg_level = libc::SOL_SOCKET;
            (*cm).cmsg_type = libc::SCM_RIGHTS;
            (*cm).cmsg_len = libc::CMSG_LEN(bytes) as _;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cm).cast(), fds.len());
        }
        if libc::sendmsg(c.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) == body.len() as isize {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// Receives a reply: its two words and the descriptors that came with it.
fn recv_reply(c: &UnixStream) -> io::Result<([u8; 8], Vec<File>)> {
    let mut body = [0u8; 8];
    let (n, files) = recv_fds(c, &mut body)?;
    if n != body.len() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "short reply"));
    }
    Ok((body, files))
}

/// Receives into `body` (how many bytes came) and the descriptors that came with them
/// (owned, so none leaks whatever the sender put there).
fn recv_fds(c: &UnixStream, body: &mut [u8]) -> io::Result<(usize, Vec<File>)> {
    let mut iov = libc::iovec {
        iov_base: body.as_mut_ptr().cast(),
        iov_len: body.len(),
    };
    let mut cbuf = [0u64; 16];
    let mut files = Vec::new();
    // SAFETY: as in `send_fds`; the control messages are read only within the
    // length the kernel reports, and each descriptor received is owned at once.
    #[allow(unsafe_code)]
    let n = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
        let n = loop {
            let n = libc::recvmsg(c.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break n;
            }
        };
        if n >= 0 {
            let mut cm = libc::CMSG_FIRSTHDR(&msg);
            while !cm.is_null() {
                if (*cm).cmsg_level == libc::SOL_SOCKET && (*cm).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(cm) as *const RawFd;
                    let count = ((*cm).cmsg_len as usize - libc::CMSG_LEN(0) as usize)
                        / std::mem::size_of::<RawFd>();
                    for i in 0..count {
                        files.push(File::from_raw_fd(data.add(i).read_unaligned()));
                    }
                }
                cm = libc::CMSG_NXTHDR(&msg, cm);
            }
        }
        n
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize, files))
}

/// Sends request `words` (with `fds`) to the exporter of segment `id` and receives its
/// reply: its status and the descriptors with it; `SegNotPublished` if nobody has
/// the name or it went unanswered.
fn ask(
    d: &Path,
    id: SegmentId,
    words: [u32; 3],
    fds: &[RawFd],
) -> Result<(i32, Vec<File>), RsmError> {
    let a = addr(d, id).map_err(|_| RsmError::SegNotPublished)?;
    let c = UnixStream::connect_addr(&a).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => RsmError::SegNotPublished,
        _ => mem::mem_error(&e),
    })?;
    let _ = c.set_read_timeout(Some(FETCH_TIMEOUT));
    let _ = c.set_write_timeout(Some(FETCH_TIMEOUT));
    let mut req = [0u8; 12];
    for (i, w) in words.iter().enumerate() {
        req[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    // An exporter that unpublished meanwhile closed the connection unanswered.
    send_fds(&c, &req, fds).map_err(|_| RsmError::SegNotPublished)?;
    let (body, files) = recv_reply(&c).map_err(|_| RsmError::SegNotPublished)?;
    let word = |i: usize| {
        [
            body[4 * i],
            body[4 * i + 1],
            body[4 * i + 2],
            body[4 * i + 3],
        ]
    };
    if u32::from_le_bytes(word(0)) != REP_MAGIC {
        return Err(RsmError::SegNotPublished);
    }
    Ok((i32::from_le_bytes(word(1)), files))
}

fn answered(code: i32) -> RsmError {
    RsmError::from_code(code).unwrap_or(RsmError::SegNotPublished)
}

/// Asks the exporter of segment `id` for its files: (control block, data), or the
/// error it answered; `SegNotPublished` if nobody has the name.
pub(crate) fn fetch(
    d: &Path,
    id: SegmentId,
    node: NodeId,
    perm: Perm,
) -> Result<(File, File), RsmError> {
    match ask(d, id, [REQ_MAGIC, perm.0, node.0], &[])? {
        (0, files) => {
            let [ctl, seg]: [File; 2] = files.try_into().map_err(|_| RsmError::SegNotPublished)?;
            Ok((ctl, seg))
        }
        (code, _) => Err(answered(code)),
    }
}

/// The exporter's signal eventfd, for the importer of slot `slot` (this process's).
pub(crate) fn exporter_sig(d: &Path, id: SegmentId, slot: usize) -> Result<File, RsmError> {
    let slot = u32::try_from(slot).unwrap_or(u32::MAX);
    match ask(d, id, [SIG_MAGIC, slot, 0], &[])? {
        (0, files) => {
            let [sig]: [File; 1] = files.try_into().map_err(|_| RsmError::SegNotPublished)?;
            Ok(sig)
        }
        (code, _) => Err(answered(code)),
    }
}

/// Hands the exporter of segment `id` this process's eventfd `sig` for importer slot
/// `slot` (which must be this process's), for its posts to the slot.
pub(crate) fn register(d: &Path, id: SegmentId, slot: usize, sig: &File) -> Result<(), RsmError> {
    let slot = u32::try_from(slot).unwrap_or(u32::MAX);
    match ask(d, id, [REG_MAGIC, slot, 0], &[sig.as_raw_fd()])? {
        (0, _) => Ok(()),
        (code, _) => Err(answered(code)),
    }
}
