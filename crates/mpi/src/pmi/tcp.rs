//! The TCP side of `myrix mpiexec`'s PMI-1 server, for ranks on other hosts
//! (`PMI_PORT=addr:port` + `PMI_ID`, the form of hydra's `-pmi-port`).
//!
//! A connection's first line must be `cmd=initack pmiid=ID` with an ID the launcher
//! handed out and not yet used: each rank (and each host's proxy) gets a random
//! 62-bit ID over ssh, so only the expected processes get in, each once. A rank is
//! answered as hydra answers (`initack`, then `set size`, `set rank`, `set debug`); a
//! proxy with `proxy_ok`. Anything else is closed unanswered. The connection is then
//! handed to the launcher; the PMI-1 messages that follow go through [`super::server`].

use super::wire::{parse_pmi1, Message};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Who an ID belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// Rank `r` of the job.
    Rank(u32),
    /// The proxy of remote host `h` (the launcher's index).
    Proxy(usize),
}

/// The IDs still expected.
pub type Expected = Arc<Mutex<HashMap<u64, Peer>>>;

/// The longest first line read from a connection.
const MAX_HELLO: usize = 256;
/// How long a connection may take to send its first line.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// A random ID in 1..2^62 (fits `PMI_ID`, an `i64`), from the kernel's generator.
pub fn random_id() -> u64 {
    let mut b = [0u8; 8];
    let got = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    let x = match got {
        Ok(()) => u64::from_ne_bytes(b),
        // No /dev/urandom: time and addresses, still unlikely to be guessed remotely.
        Err(_) => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            t ^ (std::process::id() as u64).rotate_left(32) ^ (&b as *const _ as u64)
        }
    };
    (x >> 2).max(1)
}

/// Reads one line (without the newline), at most [`MAX_HELLO`] bytes, byte by byte so
/// nothing after it is consumed.
fn read_hello(s: &mut TcpStream) -> Option<Message> {
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    loop {
        match s.read(&mut b) {
            Ok(1) if b[0] == b'\n' => break,
            Ok(1) if line.len() < MAX_HELLO => line.push(b[0]),
            _ => return None,
        }
    }
    parse_pmi1(&line).ok()
}

/// Checks a new connection's first line and answers it; the peer and the stream
/// (blocking, no timeout) if it is expected.
fn greet(mut s: TcpStream, expected: &Expected, size: u32) -> Option<(Peer, TcpStream)> {
    s.set_read_timeout(Some(HELLO_TIMEOUT)).ok()?;
    let m = read_hello(&mut s)?;
    if m.cmd != "initack" {
        return None;
    }
    let id = u64::try_from(m.get_int("pmiid")?).ok()?;
    let peer = expected.lock().ok()?.remove(&id)?;
    let reply = match peer {
        Peer::Rank(r) => format!(
            "{}{}{}{}",
            Message::new("initack").with("rc", 0).to_pmi1(),
            Message::new("set").with("size", size).to_pmi1(),
            Message::new("set").with("rank", r).to_pmi1(),
            Message::new("set").with("debug", 0).to_pmi1()
        ),
        Peer::Proxy(_) => Message::new("proxy_ok").with("rc", 0).to_pmi1(),
    };
    s.write_all(reply.as_bytes()).ok()?;
    s.set_read_timeout(None).ok()?;
    let _ = s.set_nodelay(true);
    Some((peer, s))
}

/// The thread accepting connections ([`serve`]).
pub struct Acceptor {
    thread: Option<std::thread::JoinHandle<()>>,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Acceptor {
    /// Stops accepting (a connection of its own wakes the blocked `accept`) and waits
    /// for the thread.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let mut to = self.addr;
        if to.ip().is_unspecified() {
            to.set_ip(match to {
                SocketAddr::V4(_) => Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => Ipv6Addr::LOCALHOST.into(),
            });
        }
        let _ = TcpStream::connect_timeout(&to, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.halt();
        }
    }
}

/// Accepts connections on `listener` until stopped, each greeted on a thread of its
/// own (so a silent one delays nobody); `on_peer` gets every expected one.
pub fn serve(
    listener: TcpListener,
    expected: Expected,
    size: u32,
    on_peer: impl Fn(Peer, TcpStream) + Send + Sync + 'static,
) -> std::io::Result<Acceptor> {
    let addr = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let on_peer = Arc::new(on_peer);
    let flag = stop.clone();
    let thread = std::thread::spawn(move || loop {
        let got = listener.accept();
        if flag.load(Ordering::Relaxed) {
            return;
        }
        match got {
            Ok((s, _)) => {
                let (expected, on_peer) = (expected.clone(), on_peer.clone());
                std::thread::spawn(move || {
                    if let Some((peer, s)) = greet(s, &expected, size) {
                        on_peer(peer, s);
                    }
                });
            }
            // Out of descriptors, say: let the ranks' connections wait a little.
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    });
    Ok(Acceptor {
        thread: Some(thread),
        addr,
        stop,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;

    #[test]
    fn only_expected_ids_get_in_once() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let (rank_id, proxy_id) = (random_id(), random_id());
        let expected: Expected = Arc::new(Mutex::new(HashMap::from([
            (rank_id, Peer::Rank(3)),
            (proxy_id, Peer::Proxy(0)),
        ])));
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = Mutex::new(tx);
        let h = serve(l, expected, 5, move |p, _s| {
            let _ = tx.lock().unwrap().send(p);
        })
        .unwrap();
        let hello = |line: String| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
            s.write_all(line.as_bytes()).unwrap();
            let mut r = std::io::BufReader::new(s);
            let mut lines = Vec::new();
            let mut l = String::new();
            while lines.len() < 4 && r.read_line(&mut l).unwrap_or(0) > 0 {
                lines.push(std::mem::take(&mut l));
            }
            lines
        };
        let got = hello(format!("cmd=initack pmiid={rank_id}\n"));
        assert_eq!(got[0], "cmd=initack rc=0\n");
        assert!(got.contains(&"cmd=set rank=3\n".to_string()));
        assert!(got.contains(&"cmd=set size=5\n".to_string()));
        assert_eq!(rx.recv().unwrap(), Peer::Rank(3));
        // The same ID again, an unknown one, garbage: closed unanswered.
        assert!(hello(format!("cmd=initack pmiid={rank_id}\n")).is_empty());
        assert!(hello("cmd=initack pmiid=12345\n".into()).is_empty());
        assert!(hello("\u{0}\u{1}garbage\n".into()).is_empty());
        let got = hello(format!("cmd=initack pmiid={proxy_id}\n"));
        assert_eq!(got, ["cmd=proxy_ok rc=0\n"]);
        assert_eq!(rx.recv().unwrap(), Peer::Proxy(0));
        assert!(rx.try_recv().is_err());
        h.stop();
    }

    #[test]
    fn ids_fit_pmi_id() {
        for _ in 0..100 {
            let id = random_id();
            assert!((1..(1 << 62)).contains(&id));
        }
    }
}
