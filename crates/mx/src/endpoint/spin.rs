//! How a wait spins: the clock read rarely, a pause only once the wait is long. It must
//! never sleep: a wait here is shorter than a wake-up.

use std::time::{Duration, Instant};

/// Idle polls after which a wait starts pausing between polls.
const LONG_WAIT_SPINS: u32 = 1 << 16;

/// How a wait spends the polls between two looks at its request: it reads the clock
/// only every 1024 polls (on the fast path a read would cost more than the message),
/// and pauses only once the wait is long (a pause costs more than a poll here, and under
/// KVM it can exit to the hypervisor; a long wait pauses to spare a sibling
/// hyper-thread).
pub(super) struct Spin {
    timeout: Duration,
    end: Option<Instant>,
    spins: u32,
}

impl Spin {
    pub(super) fn new(timeout: Duration) -> Spin {
        Spin {
            timeout,
            end: None,
            spins: 0,
        }
    }
    /// Whether any poll came before this one.
    #[inline(always)]
    pub(super) fn started(&self) -> bool {
        self.spins > 0
    }
    /// Counts a poll; true once the timeout has passed.
    #[inline(always)]
    pub(super) fn timed_out(&mut self) -> bool {
        self.spins = self.spins.wrapping_add(1);
        if self.spins % 1024 == 0 {
            let now = Instant::now();
            if now >= *self.end.get_or_insert(now + self.timeout) {
                return true;
            }
        }
        if self.spins >= LONG_WAIT_SPINS {
            std::hint::spin_loop();
        }
        false
    }
    /// This poll is one of those that read the clock: a moment for other rare checks.
    #[inline(always)]
    pub(super) fn checkpoint(&self) -> bool {
        self.spins % 1024 == 0
    }
    /// What is left of the timeout.
    pub(super) fn left(&self) -> Duration {
        self.end.map_or(self.timeout, |e| {
            e.saturating_duration_since(Instant::now())
        })
    }
}
