//! How a caller spin-polls a flag in a segment (a put-based ping-pong, a one-sided
//! receive): poll hard while the machine has a core for every busy process, and yield
//! the core between polls when it has not, so the process being waited for gets to run.
//!
//! Whether the machine is oversubscribed is read from `/proc/loadavg` (processes
//! running now against the cores this process may use) at most every
//! [`LOAD_PERIOD`] per process, the answer shared by every wait: creating a wait
//! reads a cached answer, neither the clock nor the file (an MPI program creates
//! one per message). A
//! wait here must never sleep or make a system call per poll on the fast path.

/// Polls between two looks at the (cached) machine load.
const RECHECK: u32 = 1 << 12;
/// How long one look at `/proc/loadavg` stays good.
pub const LOAD_PERIOD: std::time::Duration = std::time::Duration::from_millis(20);
/// Polls after which a wait that still sees no answer pauses between polls.
const LONG_WAIT: u32 = 1 << 12;

/// A spin wait. Call [`SpinWait::spin`] after every empty poll.
#[derive(Debug)]
pub struct SpinWait {
    polls: u32,
    yield_each: bool,
}

impl Default for SpinWait {
    fn default() -> Self {
        Self::new()
    }
}

impl SpinWait {
    pub fn new() -> SpinWait {
        SpinWait {
            polls: 0,
            yield_each: load::cached(),
        }
    }

    /// Spends one empty poll: nothing, a pause once the wait is long, or a yield of the
    /// core when more processes are running than there are cores.
    #[inline]
    pub fn spin(&mut self) {
        self.polls = self.polls.wrapping_add(1);
        if self.polls % RECHECK == 0 {
            self.yield_each = load::oversubscribed();
        }
        if self.yield_each {
            std::thread::yield_now();
        } else if self.polls >= LONG_WAIT {
            std::hint::spin_loop();
        }
    }

    /// The poll found what it waited for: the next wait starts hard again.
    #[inline]
    pub fn reset(&mut self) {
        self.polls = 0;
    }
}

/// Whether more processes are running than this process has cores (the fourth field of
/// `/proc/loadavg`, "running/total", counts this process too).
pub fn oversubscribed() -> bool {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    running_processes().is_some_and(|r| r > cores)
}

/// The process-wide cache of [`oversubscribed`].
mod load {
    use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
    use std::sync::OnceLock;
    use std::time::Instant;

    /// 0 unknown, 1 no, 2 yes.
    static STATE: AtomicU8 = AtomicU8::new(0);
    /// When it was read, in ns since `EPOCH`.
    static AT: AtomicU64 = AtomicU64::new(0);
    static EPOCH: OnceLock<Instant> = OnceLock::new();

    /// The last answer, without a clock read (a fresh wait's first guess; its
    /// polls look again after [`super::RECHECK`]).
    pub fn cached() -> bool {
        match STATE.load(Ordering::Relaxed) {
            0 => oversubscribed(),
            st => st == 2,
        }
    }

    pub fn oversubscribed() -> bool {
        let now = EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64;
        let st = STATE.load(Ordering::Relaxed);
        if st != 0
            && now.saturating_sub(AT.load(Ordering::Relaxed)) < super::LOAD_PERIOD.as_nanos() as u64
        {
            return st == 2;
        }
        let v = super::oversubscribed();
        STATE.store(if v { 2 } else { 1 }, Ordering::Relaxed);
        AT.store(now, Ordering::Relaxed);
        v
    }
}

fn running_processes() -> Option<usize> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let field = s.split_whitespace().nth(3)?;
    field.split('/').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn loadavg_parses() {
        assert!(super::running_processes().is_some_and(|r| r >= 1));
    }
}
