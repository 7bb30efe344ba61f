//! How a caller spin-polls a flag in a segment (a put-based ping-pong, a one-sided
//! receive): poll hard while the machine has a core for every busy process, and yield
//! the core between polls when it has not, so the process being waited for gets to run.
//!
//! Whether the machine is oversubscribed is read from `/proc/loadavg` (processes
//! running now against the cores this process may use) when the wait is created and
//! every 65536 polls after; a wait here must never sleep or make a system call per poll
//! on the fast path.

/// Polls between two looks at the machine's load.
const RECHECK: u32 = 1 << 16;
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
            yield_each: oversubscribed(),
        }
    }

    /// Spends one empty poll: nothing, a pause once the wait is long, or a yield of the
    /// core when more processes are running than there are cores.
    #[inline]
    pub fn spin(&mut self) {
        self.polls = self.polls.wrapping_add(1);
        if self.polls % RECHECK == 0 {
            self.yield_each = oversubscribed();
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
