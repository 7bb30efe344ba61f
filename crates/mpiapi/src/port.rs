//! Ports and the name service of MPI's dynamic processes (MPI-5.0 §11.4), without
//! MPI: where a port lives, the roots' byte exchange over it, published names.
//!
//! * A port is a Unix-domain socket listening in this user's directory
//!   (`$TMPDIR/myrix-mpi-<uid>/`, mode 0700, else `/tmp/...`): its name is
//!   `myrix-port:<path>`. `MPI_Open_port` binds it, `MPI_Close_port` unlinks it, so
//!   a connect to a closed port, to a port of a dead process or to a name that is
//!   not a port fails at once with `MPI_ERR_PORT`. Processes of separate jobs on
//!   one host reach each other's ports whatever their launcher (or none).
//! * The roots of the two groups each send one message (length-prefixed) and read
//!   the other's, twice (their groups' cards, then each side's verdict on them).
//!   Every read and write waits at most [`timeout`]: `MYRIX_MPI_PORT_TIMEOUT`
//!   seconds, 120 by default (also how long `MPI_Comm_accept` waits for a client).
//! * Published names are files `names/<service name in hex>` in the same directory,
//!   holding the port name: seen by every process of this user on this host. A
//!   second publish of a name replaces the first (a name left by a crashed job does
//!   not block the next); names stay until unpublished.
//!
//! This module never trusts what arrives on a socket: lengths are bounded, and the
//! caller parses the bytes.

use crate::abi::*;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::raw::c_int;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What every port name starts with.
pub const PREFIX: &str = "myrix-port:";
/// `MPI_MAX_PORT_NAME` of `mpi.h` (with its NUL).
pub const MAX_PORT_NAME: usize = 1024;
/// The longest message a root accepts from the other.
const MAX_MSG: usize = 64 << 20;

/// Ports this process opened, by name.
static PORTS: Mutex<Option<HashMap<String, UnixListener>>> = Mutex::new(None);

fn ports() -> MutexGuard<'static, Option<HashMap<String, UnixListener>>> {
    PORTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// How long a root waits for the other root (`MYRIX_MPI_PORT_TIMEOUT` seconds,
/// 1 to 86400; 120 otherwise).
pub fn timeout() -> Duration {
    let s = std::env::var("MYRIX_MPI_PORT_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| (1..=86_400).contains(s))
        .unwrap_or(120);
    Duration::from_secs(s)
}

/// This user's directory (made 0700 if missing).
pub fn user_dir() -> Result<PathBuf, c_int> {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let d = std::env::temp_dir().join(format!("myrix-mpi-{uid}"));
    let names = d.join("names");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&names)
        .map_err(|e| {
            crate::ffi::say!("myrix MPI: cannot make {}: {e}", names.display());
            MPI_ERR_OTHER
        })?;
    // A directory someone else made (or left open) is not ours to trust.
    let meta = std::fs::metadata(&d).map_err(|_| MPI_ERR_OTHER)?;
    if std::os::unix::fs::MetadataExt::uid(&meta) != uid || meta.permissions().mode() & 0o077 != 0 {
        crate::ffi::say!(
            "myrix MPI: {} is not this user's private directory",
            d.display()
        );
        return Err(MPI_ERR_OTHER);
    }
    Ok(d)
}

/// MPI_Open_port: a new listening socket; its name.
pub fn open() -> Result<String, c_int> {
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = user_dir()?.join(format!("port-{}-{seq}-{nonce:08x}", std::process::id()));
    let name = format!("{PREFIX}{}", path.display());
    if name.len() >= MAX_PORT_NAME || name.len() > 100 {
        // sun_path holds 108 bytes: a deep $TMPDIR cannot hold ports.
        crate::ffi::say!("myrix MPI: the port path {} is too long", path.display());
        return Err(MPI_ERR_OTHER);
    }
    let l = UnixListener::bind(&path).map_err(|e| {
        crate::ffi::say!("myrix MPI: cannot open a port at {}: {e}", path.display());
        MPI_ERR_OTHER
    })?;
    ports()
        .get_or_insert_with(HashMap::new)
        .insert(name.clone(), l);
    Ok(name)
}

/// The socket path a port name names; `MPI_ERR_PORT` if it is not one of ours.
fn path_of(name: &str) -> Result<PathBuf, c_int> {
    let p = name.strip_prefix(PREFIX).ok_or(MPI_ERR_PORT)?;
    if p.is_empty() || name.len() >= MAX_PORT_NAME {
        return Err(MPI_ERR_PORT);
    }
    Ok(PathBuf::from(p))
}

/// MPI_Close_port: a port this process opened stops listening.
pub fn close(name: &str) -> Result<(), c_int> {
    let l = ports()
        .as_mut()
        .and_then(|m| m.remove(name))
        .ok_or(MPI_ERR_PORT)?;
    drop(l);
    let _ = std::fs::remove_file(path_of(name)?);
    Ok(())
}

/// Closes every port still open (at MPI_Finalize).
pub fn close_all() {
    let names: Vec<String> = ports()
        .as_ref()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    for n in names {
        let _ = close(&n);
    }
}

/// Whether `fd` gets ready for `events` before `until`.
fn ready(fd: RawFd, events: i16, until: Instant) -> Result<bool, c_int> {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let mut p = libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, 1000) as c_int;
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n > 0 {
            return Ok(true);
        }
        if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Err(MPI_ERR_OTHER);
        }
    }
}

/// Waits until `fd` is ready for `events`; `MPI_ERR_PORT` once `deadline` passes.
fn wait(fd: RawFd, events: i16, deadline: Instant) -> Result<(), c_int> {
    if ready(fd, events, deadline)? {
        return Ok(());
    }
    Err(timed_out())
}

/// Says the other side did not come in time; `MPI_ERR_PORT`.
fn timed_out() -> c_int {
    crate::ffi::say!(
        "myrix MPI: the other side did not answer within {} s (MYRIX_MPI_PORT_TIMEOUT)",
        timeout().as_secs()
    );
    MPI_ERR_PORT
}

/// The listener of a port this process opened, waiting for one client (at most
/// until `deadline`).
pub fn accept(name: &str, deadline: Instant) -> Result<UnixStream, c_int> {
    accept_watching(name, deadline, &mut || None)
}

/// As [`accept`], giving up (`MPI_ERR_PORT`, with the reason printed) as soon as
/// `gone` names one: the client can no longer come (a spawn's launcher ended).
pub fn accept_watching(
    name: &str,
    deadline: Instant,
    gone: &mut dyn FnMut() -> Option<String>,
) -> Result<UnixStream, c_int> {
    let l = ports()
        .as_ref()
        .and_then(|m| m.get(name))
        .ok_or(MPI_ERR_PORT)?
        .try_clone()
        .map_err(|_| MPI_ERR_OTHER)?;
    l.set_nonblocking(true).map_err(|_| MPI_ERR_OTHER)?;
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).map_err(|_| MPI_ERR_OTHER)?;
                return Ok(s);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if let Some(why) = gone() {
                    crate::ffi::say!("myrix MPI: no client will come to the port: {why}");
                    return Err(MPI_ERR_PORT);
                }
                // Short waits, so `gone` is asked often.
                let step = deadline.min(Instant::now() + Duration::from_millis(50));
                if !ready(l.as_raw_fd(), libc::POLLIN, step)? && Instant::now() >= deadline {
                    return Err(timed_out());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(MPI_ERR_PORT),
        }
    }
}

/// Connects to port `name`; `MPI_ERR_PORT` if nothing listens there.
pub fn connect(name: &str) -> Result<UnixStream, c_int> {
    UnixStream::connect(path_of(name)?).map_err(|_| MPI_ERR_PORT)
}

/// A socket the roots talk over: its descriptor (a port's stream, or the caller's
/// socket for MPI_Comm_join, which stays the caller's).
pub struct Wire {
    pub fd: RawFd,
    pub deadline: Instant,
}

impl Wire {
    /// Moves `len` bytes with `io(at)` (a send or receive of the bytes from `at` on,
    /// returning the system call's result), waiting for `events` before each try. An
    /// interrupted or would-block call tries again; a closed peer (0 bytes) or any other
    /// error is MPI_ERR_PORT.
    fn pump(
        &self,
        events: i16,
        len: usize,
        mut io: impl FnMut(usize) -> isize,
    ) -> Result<(), c_int> {
        let mut at = 0;
        while at < len {
            wait(self.fd, events, self.deadline)?;
            let n = io(at);
            if n > 0 {
                at += n as usize;
                continue;
            }
            let e = std::io::Error::last_os_error();
            let again = n < 0
                && matches!(
                    e.kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
                );
            if !again {
                return Err(MPI_ERR_PORT);
            }
        }
        Ok(())
    }

    fn write_all(&self, b: &[u8]) -> Result<(), c_int> {
        self.pump(libc::POLLOUT, b.len(), |at| {
            // SAFETY: b[at..] is valid for its length; MSG_NOSIGNAL: no SIGPIPE.
            unsafe {
                libc::send(
                    self.fd,
                    b[at..].as_ptr().cast(),
                    b.len() - at,
                    libc::MSG_NOSIGNAL,
                )
            }
        })
    }

    fn read_exact(&self, b: &mut [u8]) -> Result<(), c_int> {
        let len = b.len();
        self.pump(libc::POLLIN, len, |at| {
            // SAFETY: the tail of b is valid for writing len - at bytes.
            unsafe { libc::recv(self.fd, b[at..].as_mut_ptr().cast(), len - at, 0) }
        })
    }

    /// Sends `mine` and returns the other side's message (both send first: the
    /// messages are small enough for the socket's buffer).
    pub fn swap(&self, mine: &[u8]) -> Result<Vec<u8>, c_int> {
        let len = u32::try_from(mine.len()).map_err(|_| MPI_ERR_INTERN)?;
        self.write_all(&len.to_le_bytes())?;
        self.write_all(mine)?;
        let mut l = [0u8; 4];
        self.read_exact(&mut l)?;
        let n = u32::from_le_bytes(l) as usize;
        if n > MAX_MSG {
            return Err(MPI_ERR_PORT);
        }
        let mut v = vec![0u8; n];
        self.read_exact(&mut v)?;
        Ok(v)
    }
}

fn name_file(service: &str) -> Result<PathBuf, c_int> {
    if service.is_empty() || service.len() > 1024 {
        return Err(MPI_ERR_SERVICE);
    }
    let hex: String = service.bytes().map(|b| format!("{b:02x}")).collect();
    Ok(user_dir()?.join("names").join(hex))
}

/// MPI_Publish_name.
pub fn publish(service: &str, port: &str) -> Result<(), c_int> {
    if port.is_empty() || port.len() >= MAX_PORT_NAME {
        return Err(MPI_ERR_PORT);
    }
    let f = name_file(service)?;
    let tmp = f.with_extension(format!("tmp{}", std::process::id()));
    let w = (|| {
        let mut o = std::fs::File::create(&tmp)?;
        o.write_all(port.as_bytes())?;
        std::fs::rename(&tmp, &f)
    })();
    w.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        crate::ffi::say!("myrix MPI: cannot publish {service:?}: {e}");
        MPI_ERR_OTHER
    })
}

/// MPI_Unpublish_name: `MPI_ERR_SERVICE` if the name is not published (with this
/// port).
pub fn unpublish(service: &str, port: &str) -> Result<(), c_int> {
    let f = name_file(service)?;
    match std::fs::read_to_string(&f) {
        Ok(p) if p == port => std::fs::remove_file(&f).map_err(|_| MPI_ERR_SERVICE),
        _ => Err(MPI_ERR_SERVICE),
    }
}

/// MPI_Lookup_name: the port published under `service`; `MPI_ERR_NAME` if none.
pub fn lookup(service: &str) -> Result<String, c_int> {
    let f = name_file(service).map_err(|e| {
        if e == MPI_ERR_SERVICE {
            MPI_ERR_NAME
        } else {
            e
        }
    })?;
    let mut s = String::new();
    std::fs::File::open(&f)
        .and_then(|o| o.take(MAX_PORT_NAME as u64).read_to_string(&mut s))
        .map_err(|_| MPI_ERR_NAME)?;
    if s.is_empty() {
        return Err(MPI_ERR_NAME);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_errors() {
        let svc = format!("myrix-test-{}", std::process::id());
        assert_eq!(lookup(&svc), Err(MPI_ERR_NAME));
        publish(&svc, "myrix-port:/x").unwrap();
        assert_eq!(lookup(&svc).as_deref(), Ok("myrix-port:/x"));
        assert_eq!(unpublish(&svc, "myrix-port:/y"), Err(MPI_ERR_SERVICE));
        unpublish(&svc, "myrix-port:/x").unwrap();
        assert_eq!(lookup(&svc), Err(MPI_ERR_NAME));
        assert_eq!(unpublish(&svc, "myrix-port:/x"), Err(MPI_ERR_SERVICE));
        assert_eq!(lookup(""), Err(MPI_ERR_NAME));
    }

    #[test]
    fn ports_open_connect_swap_close() {
        let name = open().unwrap();
        assert!(name.starts_with(PREFIX));
        let c = connect(&name).unwrap();
        let d = Instant::now() + Duration::from_secs(10);
        let s = accept(&name, d).unwrap();
        let t = std::thread::spawn(move || {
            Wire {
                fd: c.as_raw_fd(),
                deadline: d,
            }
            .swap(b"client")
        });
        let got = Wire {
            fd: s.as_raw_fd(),
            deadline: d,
        }
        .swap(b"server")
        .unwrap();
        assert_eq!(got, b"client");
        assert_eq!(t.join().unwrap().unwrap(), b"server");
        close(&name).unwrap();
        assert_eq!(close(&name), Err(MPI_ERR_PORT));
        assert_eq!(connect(&name).err(), Some(MPI_ERR_PORT));
        assert_eq!(connect("tcp:1.2.3.4").err(), Some(MPI_ERR_PORT));
        assert_eq!(connect(PREFIX).err(), Some(MPI_ERR_PORT));
    }
}
