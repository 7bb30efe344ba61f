//! The `shm` controller's segment names (abstract sockets, `crates/rsm/src/shm/serve.rs`):
//! whatever a local process sends to a name, the exporter's serving thread survives
//! and goes on serving; a name is free again as soon as its segment is unpublished;
//! the files of a segment are unnamed, and so are the pollable descriptors of both
//! ends (eventfds), which still wake.

use std::io::{Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{SocketAddr, UnixStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use myrix_rsm::{Controller, ExportFlags, Perm, RsmError, SegmentId, SignalFlags};

fn dir() -> PathBuf {
    std::env::var_os("MYRIX_RSM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/shm/myrix-rsm"))
}

/// The socket address that names segment `id` (as `serve.rs` makes it).
fn name(id: SegmentId) -> SocketAddr {
    let m = std::fs::metadata(dir()).unwrap();
    let n = format!("myrix-rsm/{:x}:{:x}/{:08x}", m.dev(), m.ino(), id.0);
    SocketAddr::from_abstract_name(n.as_bytes()).unwrap()
}

#[test]
fn hostile_clients_do_not_stop_the_serving_thread() {
    let c = Controller::get("shm").unwrap();
    let e = c.export_create(4096, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let a = name(id);
    // One that connects and leaves; one that says nothing (the thread waits for it at
    // most 1 s); garbage of every length up to past a request; a request with a bad
    // magic; a request asking for a permission no list grants.
    drop(UnixStream::connect_addr(&a).unwrap());
    let silent = UnixStream::connect_addr(&a).unwrap();
    for len in [1usize, 5, 11, 12, 13, 100, 5000] {
        let mut s = UnixStream::connect_addr(&a).unwrap();
        let junk: Vec<u8> = (0..len).map(|i| (i * 37 + len) as u8).collect();
        let _ = s.write_all(&junk);
    }
    let mut s = UnixStream::connect_addr(&a).unwrap();
    let mut req = [0u8; 12];
    req[..4].copy_from_slice(&0x7172_7372u32.to_le_bytes());
    req[4..8].copy_from_slice(&0xffff_ffffu32.to_le_bytes());
    s.write_all(&req).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut reply = [0u8; 8];
    s.read_exact(&mut reply).unwrap();
    let status = i32::from_le_bytes(reply[4..].try_into().unwrap());
    assert_ne!(status, 0, "a nonsense permission was granted");
    // The real importer is served after all of that.
    let t = Instant::now();
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    imp.put(0, &[7, 8, 9]).unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    drop(silent);
    // SAFETY (test): the export's memory, alive, in bounds.
    let first = unsafe { std::ptr::read_volatile(e.as_ptr().add(1)) };
    assert_eq!(first, 8);
}

#[test]
fn an_unpublished_id_is_free_at_once_and_its_files_have_no_name() {
    let c = Controller::get("shm").unwrap();
    let e = c.export_create(4096, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let prefix = format!("{:08x}.", id.0);
    let named: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert_eq!(named, Vec::<String>::new());
    let again = c.export_create(4096, ExportFlags::default()).unwrap();
    assert_eq!(again.publish(Some(id), &[]), Err(RsmError::SegidInUse));
    for _ in 0..50 {
        e.unpublish().unwrap();
        assert_eq!(
            c.import_connect(c.local_node(), id, Perm::RDWR)
                .unwrap_err(),
            RsmError::SegNotPublished
        );
        assert_eq!(again.publish(Some(id), &[]), Ok(id));
        let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
        imp.put(0, &[1]).unwrap();
        drop(imp);
        again.unpublish().unwrap();
        assert_eq!(e.publish(Some(id), &[]), Ok(id));
    }
}

/// Files of the registry directory under segment `id`'s name.
fn named(id: SegmentId) -> Vec<String> {
    let prefix = format!("{:08x}.", id.0);
    std::fs::read_dir(dir())
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// Whether `fd` polls readable within `ms` milliseconds.
fn readable_within(fd: i32, ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY (test): one valid pollfd.
    unsafe { libc::poll(&mut p, 1, ms) == 1 && p.revents & libc::POLLIN != 0 }
}

#[test]
fn pollable_descriptors_have_no_name_and_wake_both_ways() {
    let c = Controller::get("shm").unwrap();
    let e = c.export_create(4096, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let a = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    let b = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    let fe = e.pollfd().unwrap();
    let fa = a.pollfd().unwrap();
    assert_eq!(a.pollfd().unwrap(), fa, "asked again: the same descriptor");
    assert_eq!(named(id), Vec::<String>::new());
    assert!(!readable_within(fe, 0) && !readable_within(fa, 0));
    // Importer to exporter: the exporter's eventfd, which the importer asks for now.
    a.signal_post(SignalFlags::default()).unwrap();
    assert!(readable_within(fe, 1000));
    e.signal_wait(Some(Duration::from_secs(1))).unwrap();
    assert!(!readable_within(fe, 0), "taking the last signal drains it");
    // Exporter to importers: a's registered eventfd; b polls nothing and still gets it.
    e.signal_post(SignalFlags::default()).unwrap();
    assert!(readable_within(fa, 1000));
    a.signal_wait(Some(Duration::from_secs(1))).unwrap();
    b.signal_wait(Some(Duration::from_secs(1))).unwrap();
    assert!(!readable_within(fa, 0));
    // Released and asked again: a new one, registered again, that wakes too.
    a.release_pollfd().unwrap();
    let fa = a.pollfd().unwrap();
    e.signal_post(SignalFlags::default()).unwrap();
    assert!(readable_within(fa, 1000));
    a.signal_wait(Some(Duration::from_secs(1))).unwrap();
    b.signal_wait(Some(Duration::from_secs(1))).unwrap();
    assert_eq!(named(id), Vec::<String>::new());
}

/// A registration names a slot: one the caller does not claim is refused, and the
/// serving thread goes on serving.
#[test]
fn an_eventfd_for_a_slot_not_the_callers_is_refused() {
    let c = Controller::get("shm").unwrap();
    let e = c.export_create(4096, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    // Slot 7 is nobody's: a request with an eventfd alongside, sent by hand.
    let s = UnixStream::connect_addr(&name(id)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // SAFETY (test): eventfd takes no pointer.
    let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    assert!(efd >= 0);
    let mut req = [0u8; 12];
    req[..4].copy_from_slice(&0x6773_7372u32.to_le_bytes());
    req[4..8].copy_from_slice(&7u32.to_le_bytes());
    send_with_fd(&s, &req, efd);
    let mut rep = [0u8; 8];
    (&s).read_exact(&mut rep).unwrap();
    let status = i32::from_le_bytes(rep[4..].try_into().unwrap());
    assert_eq!(status, RsmError::PermDenied.code());
    // SAFETY (test): our own descriptor.
    unsafe { libc::close(efd) };
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    assert!(imp.pollfd().unwrap() >= 0);
}

fn send_with_fd(s: &UnixStream, body: &[u8], fd: i32) {
    use std::os::fd::AsRawFd;
    let mut iov = libc::iovec {
        iov_base: body.as_ptr().cast_mut().cast(),
        iov_len: body.len(),
    };
    let mut cbuf = [0u64; 4];
    // SAFETY (test): every pointer points into locals that outlive the call; the
    // control message fits `cbuf` (32 bytes, CMSG_SPACE of one descriptor).
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(4) as _;
        let cm = libc::CMSG_FIRSTHDR(&msg);
        (*cm).cmsg_level = libc::SOL_SOCKET;
        (*cm).cmsg_type = libc::SCM_RIGHTS;
        (*cm).cmsg_len = libc::CMSG_LEN(4) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cm).cast::<i32>(), fd);
        assert_eq!(libc::sendmsg(s.as_raw_fd(), &msg, 0), body.len() as isize);
    }
}
