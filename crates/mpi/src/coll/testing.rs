//! Point-to-point for tests and single-process use: [`Threads`] runs `n` ranks as
//! threads of this process (a channel per ordered pair of ranks, optional
//! synchronous sends that block until matched, so an algorithm that could deadlock
//! on a real network does so here too and fails after a timeout); [`SelfPt2Pt`] is
//! the one rank of a communicator of size 1 (sends to itself queue up).
//!
//! Never used for a real job's traffic between processes.

use super::{CollError, Pt2Pt};
use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// How long a rank waits for a message or a match before calling it a deadlock.
pub const DEADLOCK_TIMEOUT: Duration = Duration::from_secs(30);

struct Msg {
    tag: i32,
    data: Vec<u8>,
    ack: Option<Sender<()>>,
}

/// One rank of an in-process job.
pub struct Threads {
    rank: usize,
    to: Vec<Sender<Msg>>,
    from: Vec<Receiver<Msg>>,
    early: Vec<VecDeque<Msg>>,
    sync: bool,
    /// Messages sent (for tests that count traffic).
    pub sent: usize,
}

impl Threads {
    /// Runs `f` on `n` ranks, each in its own thread; returns their results in rank
    /// order. With `sync`, a send returns only once the receiver has taken it.
    pub fn run<T: Send>(n: usize, sync: bool, f: impl Fn(&mut Threads) -> T + Sync) -> Vec<T> {
        let mut to: Vec<Vec<Sender<Msg>>> = (0..n).map(|_| Vec::with_capacity(n)).collect();
        let mut from: Vec<Vec<Receiver<Msg>>> = (0..n).map(|_| Vec::with_capacity(n)).collect();
        // Channel (s -> d): the sender end with s, the receiver end with d, both
        // indexed by the peer.
        let mut ends: Vec<Vec<Option<Receiver<Msg>>>> = (0..n).map(|_| Vec::new()).collect();
        for s in 0..n {
            for _ in 0..n {
                let (tx, rx) = channel();
                to[s].push(tx);
                ends[s].push(Some(rx));
            }
        }
        for (d, from) in from.iter_mut().enumerate() {
            for row in ends.iter_mut() {
                from.push(row[d].take().expect("each channel once"));
            }
        }
        let f = &f;
        std::thread::scope(|sc| {
            let handles: Vec<_> = to
                .into_iter()
                .zip(from)
                .enumerate()
                .map(|(rank, (to, from))| {
                    sc.spawn(move || {
                        let mut t = Threads {
                            rank,
                            to,
                            from,
                            early: (0..n).map(|_| VecDeque::new()).collect(),
                            sync,
                            sent: 0,
                        };
                        f(&mut t)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    }

    fn check_rank(&self, r: usize) -> Result<(), CollError> {
        if r < self.to.len() {
            Ok(())
        } else {
            Err(CollError::Transport(format!("rank {r} out of range")))
        }
    }

    fn post(
        &mut self,
        dest: usize,
        tag: i32,
        data: &[u8],
    ) -> Result<Option<Receiver<()>>, CollError> {
        self.check_rank(dest)?;
        let (ack, acked) = if self.sync {
            let (a, b) = channel();
            (Some(a), Some(b))
        } else {
            (None, None)
        };
        self.to[dest]
            .send(Msg {
                tag,
                data: data.to_vec(),
                ack,
            })
            .map_err(|_| CollError::Transport(format!("rank {dest} is gone")))?;
        self.sent += 1;
        Ok(acked)
    }

    fn matched(acked: Option<Receiver<()>>, dest: usize) -> Result<(), CollError> {
        match acked.map(|a| a.recv_timeout(DEADLOCK_TIMEOUT)) {
            None | Some(Ok(())) => Ok(()),
            Some(Err(_)) => Err(CollError::Transport(format!(
                "send to rank {dest} never matched (deadlock?)"
            ))),
        }
    }
}

fn deliver(m: Msg, buf: &mut [u8]) -> Result<usize, CollError> {
    if let Some(a) = &m.ack {
        let _ = a.send(());
    }
    if m.data.len() > buf.len() {
        return Err(CollError::Truncated {
            len: m.data.len(),
            cap: buf.len(),
        });
    }
    buf[..m.data.len()].copy_from_slice(&m.data);
    Ok(m.data.len())
}

impl Pt2Pt for Threads {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.to.len()
    }
    fn send(&mut self, dest: usize, tag: i32, data: &[u8]) -> Result<(), CollError> {
        let acked = self.post(dest, tag, data)?;
        Threads::matched(acked, dest)
    }
    fn recv(&mut self, src: usize, tag: i32, buf: &mut [u8]) -> Result<usize, CollError> {
        self.check_rank(src)?;
        if let Some(i) = self.early[src].iter().position(|m| m.tag == tag) {
            let m = self.early[src].remove(i).expect("found above");
            return deliver(m, buf);
        }
        loop {
            match self.from[src].recv_timeout(DEADLOCK_TIMEOUT) {
                Ok(m) if m.tag == tag => return deliver(m, buf),
                Ok(m) => self.early[src].push_back(m),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(CollError::Transport(format!(
                        "rank {} waited too long for rank {src} tag {tag} (deadlock?)",
                        self.rank
                    )))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(CollError::Transport(format!("rank {src} is gone")))
                }
            }
        }
    }
    fn sendrecv(
        &mut self,
        dest: usize,
        stag: i32,
        data: &[u8],
        src: usize,
        rtag: i32,
        buf: &mut [u8],
    ) -> Result<usize, CollError> {
        let acked = self.post(dest, stag, data)?;
        let n = self.recv(src, rtag, buf)?;
        Threads::matched(acked, dest)?;
        Ok(n)
    }
}

/// The single rank of a communicator of size 1: messages to itself wait in a queue.
#[derive(Default)]
pub struct SelfPt2Pt {
    queue: VecDeque<(i32, Vec<u8>)>,
}

impl SelfPt2Pt {
    pub fn new() -> SelfPt2Pt {
        SelfPt2Pt::default()
    }
}

impl Pt2Pt for SelfPt2Pt {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn send(&mut self, dest: usize, tag: i32, data: &[u8]) -> Result<(), CollError> {
        if dest != 0 {
            return Err(CollError::Transport(format!("rank {dest} out of range")));
        }
        self.queue.push_back((tag, data.to_vec()));
        Ok(())
    }
    fn recv(&mut self, src: usize, tag: i32, buf: &mut [u8]) -> Result<usize, CollError> {
        if src != 0 {
            return Err(CollError::Transport(format!("rank {src} out of range")));
        }
        let i = self.queue.iter().position(|m| m.0 == tag).ok_or_else(|| {
            CollError::Transport("receive from self with nothing sent (deadlock)".into())
        })?;
        let (_, data) = self.queue.remove(i).expect("found above");
        deliver(
            Msg {
                tag,
                data,
                ack: None,
            },
            buf,
        )
    }
    fn sendrecv(
        &mut self,
        dest: usize,
        stag: i32,
        data: &[u8],
        src: usize,
        rtag: i32,
        buf: &mut [u8],
    ) -> Result<usize, CollError> {
        self.send(dest, stag, data)?;
        self.recv(src, rtag, buf)
    }
}
