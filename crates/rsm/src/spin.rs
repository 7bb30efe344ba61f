//! How a caller spin-polls a flag in a segment (a put-based ping-pong, a one-sided
//! receive): poll hard while the machine has a core for every busy process, and yield
//! the core between polls when it has not, so the process being waited for gets to run.
//!
//! Two things decide:
//! * the caller's own share of the machine, when it knows it ([`set_local_procs`]: an
//!   MPI job's ranks on this host). A job with more busy processes than cores yields
//!   from its first empty poll: the process it waits for may need this very core.
//! * otherwise the machine's load, read from `/proc/loadavg` (processes running now
//!   against the cores this process may use) at most every [`LOAD_PERIOD`] per
//!   process, the answer shared by every wait. It is consulted only once a wait has
//!   spun a budget of polls for nothing ([`HARD_POLLS_MIN`]..=[`HARD_POLLS_MAX`],
//!   halved by every wait that had to yield, doubled back by every wait answered well
//!   within it): an answer that comes within a few microseconds (a ping-pong whose
//!   peer has a core) never pays for a yield because somebody else's compiler is
//!   running too, and a pair that the scheduler put on one core soon stops spinning
//!   its peer's time away.
//!
//! [`SpinWait::for_job`] leaves the machine's load out: its waits yield only when the
//! job itself has more busy processes on this host than cores (and otherwise, as
//! insurance, once every [`JOB_YIELD_PERIOD`] polls). MPI collectives wait that way,
//! as Open MPI and MPICH do: on a machine busy with other work (a niced compiler), a
//! yield hands the core to it for a scheduler slice (tens of microseconds and more),
//! where the peer rank, which has a core of its own, answers within a microsecond.
//!
//! Creating a wait reads neither the clock nor the file (an MPI program creates one
//! per message). A wait here must never sleep or make a system call per poll on the
//! fast path.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Polls between two looks at the (cached) machine load.
const RECHECK: u32 = 1 << 15;
/// How long one look at `/proc/loadavg` stays good.
pub const LOAD_PERIOD: std::time::Duration = std::time::Duration::from_millis(20);
/// Polls after which a wait that still sees no answer pauses between polls.
const LONG_WAIT: u32 = 1 << 12;
/// The most and the fewest empty polls a wait spins hard before it asks whether it
/// should yield (unless its own job oversubscribes the machine). The budget between
/// them adapts ([`budget`]).
pub const HARD_POLLS_MAX: u32 = 1 << 13;
pub const HARD_POLLS_MIN: u32 = 1 << 6;

/// Empty polls between two yields of a [`SpinWait::for_job`] wait when the job does
/// not oversubscribe the machine (milliseconds: a peer descheduled for that long is
/// rare, and then a yield helps it back).
pub const JOB_YIELD_PERIOD: u32 = 1 << 18;

/// Busy processes the caller's job runs on this machine; 0 unknown.
static LOCAL_PROCS: AtomicUsize = AtomicUsize::new(0);

/// Tells the waits of this process how many busy-polling processes its job runs on
/// this machine (an MPI job's local ranks). More than the cores: every wait yields
/// from its first empty poll.
pub fn set_local_procs(n: usize) {
    LOCAL_PROCS.store(n, Ordering::Relaxed);
    JOB_OVER.store(n > cores(), Ordering::Relaxed);
}

/// [`job_oversubscribed`]'s answer, kept by [`set_local_procs`]: every wait asks it
/// when it starts and ends, so it is one load, not a call and the cores' `OnceLock`.
static JOB_OVER: AtomicBool = AtomicBool::new(false);

/// The machine's online CPUs (capped by a cgroup CPU quota): what `/proc/loadavg`'s
/// running count and a job's processes on the host are compared with. Not the
/// caller's affinity (`available_parallelism`): a process pinned to one core saw 1,
/// and two busy processes on a 2-core machine counted as oversubscribed
/// (docs/rsm-net.md, session 28).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(online_cpus)
}

/// [`cores`], uncached: the online CPUs, capped by a CPU quota of the process's
/// control group (a container limited to 2 CPUs of a 64-CPU host must yield as a
/// 2-core machine would).
#[allow(unsafe_code)]
fn online_cpus() -> usize {
    // SAFETY: sysconf reads a system value and touches no memory of ours.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    let Some(online) = usize::try_from(online).ok().filter(|&n| n > 0) else {
        return std::thread::available_parallelism().map_or(1, |n| n.get());
    };
    // `available_parallelism` reads the cgroup quota (v1 and v2) but also the
    // caller's affinity: asked from a thread allowed on every CPU, only the quota
    // (and the cpuset) is left.
    let quota = std::thread::Builder::new()
        .name("myrix-cpus".into())
        .spawn(|| {
            // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes into the
            // live set, sched_setaffinity reads it (0: this thread only).
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for cpu in 0..libc::CPU_SETSIZE as usize {
                    libc::CPU_SET(cpu, &mut set);
                }
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            std::thread::available_parallelism().map_or(usize::MAX, |n| n.get())
        })
        .ok()
        .and_then(|t| t.join().ok())
        .unwrap_or(usize::MAX);
    online.min(quota)
}

/// Whether this process's own job has more busy processes on the machine than cores.
#[inline]
pub fn job_oversubscribed() -> bool {
    JOB_OVER.load(Ordering::Relaxed)
}

/// A spin wait. Call [`SpinWait::spin`] after every empty poll.
#[derive(Debug)]
pub struct SpinWait {
    polls: u32,
    /// This wait's hard budget (read from [`budget`] when it starts).
    hard: u32,
    yield_each: bool,
    /// Whether this wait has yielded since its last answer.
    yielded: bool,
    /// Whether only the job's own processes per core decide ([`SpinWait::for_job`]).
    job_only: bool,
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
            hard: budget::get(),
            yield_each: job_oversubscribed(),
            yielded: false,
            job_only: false,
        }
    }

    /// A wait that yields from its first empty poll when the caller's job has more
    /// busy processes on this host than cores ([`set_local_procs`]), and otherwise
    /// spins (pausing between polls) whatever the machine's load, yielding only once
    /// every [`JOB_YIELD_PERIOD`] polls. While the job's size is unknown, the same as
    /// [`SpinWait::new`].
    pub fn for_job() -> SpinWait {
        if LOCAL_PROCS.load(Ordering::Relaxed) == 0 {
            return SpinWait::new();
        }
        SpinWait {
            polls: 0,
            hard: JOB_YIELD_PERIOD,
            yield_each: job_oversubscribed(),
            yielded: false,
            job_only: true,
        }
    }

    /// Spends one empty poll: nothing, a pause once the wait is long, or a yield of the
    /// core when more processes are running than there are cores.
    #[inline]
    pub fn spin(&mut self) {
        self.polls = self.polls.wrapping_add(1);
        if self.job_only {
            if self.yield_each || self.polls % JOB_YIELD_PERIOD == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
            return;
        }
        if self.polls == self.hard || self.polls % RECHECK == 0 {
            self.yield_each = job_oversubscribed() || load::oversubscribed();
        }
        if self.yield_each {
            self.yielded = true;
            std::thread::yield_now();
        } else if self.polls >= LONG_WAIT {
            std::hint::spin_loop();
        }
    }

    /// [`SpinWait::spin`] with a pause after every empty poll that does not yield,
    /// from the first: for a wait whose answer arrives in the very line it polls (a
    /// direct receive's head postbox). Without it the core runs ahead into loads of
    /// that line while the writer is storing into it (docs/mpi-p2p.md, session 31).
    #[inline]
    pub fn spin_paused(&mut self) {
        self.spin();
        if !self.yield_each && self.polls < LONG_WAIT {
            std::hint::spin_loop();
        }
    }

    /// The poll found what it waited for: the next wait starts hard again (a
    /// job that oversubscribes the machine keeps yielding).
    #[inline]
    pub fn reset(&mut self) {
        if self.polls > 0 && !self.job_only {
            budget::settle(self.polls, self.yielded);
            self.hard = budget::get();
        }
        self.polls = 0;
        self.yielded = false;
        self.yield_each = job_oversubscribed();
    }

    /// Whether empty polls yield the core now.
    pub fn yields(&self) -> bool {
        self.yield_each
    }
}

/// Whether more processes are running than this process has cores (the fourth field of
/// `/proc/loadavg`, "running/total", counts this process too).
pub fn oversubscribed() -> bool {
    running_processes().is_some_and(|r| r > cores())
}

/// How long waits spin hard before they consider yielding, shared by the waits of a
/// process and adapted to what they see: a wait that had to yield before its answer
/// came halves it (the process it waits for probably shares this core: spinning only
/// keeps it off), a wait answered well within it doubles it back (the peer runs
/// beside this one). Between [`HARD_POLLS_MIN`] and [`HARD_POLLS_MAX`].
mod budget {
    use std::sync::atomic::{AtomicU32, Ordering};

    static HARD: AtomicU32 = AtomicU32::new(super::HARD_POLLS_MAX);

    #[inline]
    pub fn get() -> u32 {
        HARD.load(Ordering::Relaxed)
    }

    /// A wait ended (an answer came) after `polls` empty polls, having yielded or not.
    #[inline]
    pub fn settle(polls: u32, yielded: bool) {
        let h = get();
        let n = if yielded {
            (h / 2).max(super::HARD_POLLS_MIN)
        } else if polls < h / 2 {
            (h * 2).min(super::HARD_POLLS_MAX)
        } else {
            h
        };
        if n != h {
            HARD.store(n, Ordering::Relaxed);
        }
    }
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
    fn a_job_with_more_processes_than_cores_yields_at_once() {
        super::set_local_procs(usize::MAX);
        assert!(super::SpinWait::new().yields());
        super::set_local_procs(1);
        let mut w = super::SpinWait::new();
        assert!(!w.yields(), "one process per core spins hard first");
        w.spin();
        assert!(!w.yields());
        // (One test: the job's process count is process-wide.)
        super::set_local_procs(usize::MAX);
        assert!(super::SpinWait::for_job().yields());
        super::set_local_procs(1);
        let mut w = super::SpinWait::for_job();
        for _ in 0..super::HARD_POLLS_MAX * 2 {
            w.spin();
        }
        assert!(
            !w.yields(),
            "a job with a core per process never yields on load"
        );
        // The kept answer follows every change of the count, at the cores' edge.
        let cores = super::cores();
        super::set_local_procs(cores);
        assert!(!super::job_oversubscribed());
        let mut w = super::SpinWait::new();
        w.spin_paused();
        assert!(
            !w.yields(),
            "a paused poll spins while the job has its cores"
        );
        super::set_local_procs(cores + 1);
        assert!(super::job_oversubscribed());
        let mut w = super::SpinWait::new();
        w.spin_paused();
        assert!(
            w.yields(),
            "a paused poll still yields in an oversubscribed job"
        );
        super::set_local_procs(0);
        assert!(!super::job_oversubscribed());
    }

    /// A thread pinned to one CPU still counts the machine's cores (before session
    /// 28 it counted its affinity: 1, so two busy processes were "oversubscribed").
    #[test]
    #[allow(unsafe_code)]
    fn a_pinned_caller_counts_the_machines_cores() {
        let online = super::online_cpus();
        let pinned = std::thread::spawn(move || {
            // SAFETY: zeroed cpu_set_t values are empty sets; sched_getaffinity
            // fills one, CPU_ISSET/CPU_SET read and write live sets, and
            // sched_setaffinity reads one of its size; 0 is this thread.
            let ok = unsafe {
                let size = std::mem::size_of::<libc::cpu_set_t>();
                let mut now: libc::cpu_set_t = std::mem::zeroed();
                let first = (libc::sched_getaffinity(0, size, &mut now) == 0)
                    .then(|| (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &now)))
                    .flatten();
                first.is_some_and(|cpu| {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(cpu, &mut set);
                    libc::sched_setaffinity(0, size, &set) == 0
                })
            };
            let seen = std::thread::available_parallelism().map_or(0, |n| n.get());
            (ok, seen, super::online_cpus())
        })
        .join()
        .unwrap();
        let (ok, seen, counted) = pinned;
        assert!(ok, "pinning a thread to the first CPU it may use");
        assert_eq!(seen, 1, "the pinned thread's affinity is one CPU");
        assert_eq!(counted, online, "the pinned thread counts every online CPU");
        assert!(online >= 1);
    }

    #[test]
    fn loadavg_parses() {
        assert!(super::running_processes().is_some_and(|r| r >= 1));
    }
}
