//! Nonblocking collectives: each call becomes a [`Schedule`] — the whole program of
//! one rank's part, built at the start — that the point-to-point engine runs forward
//! in every `progress` call ([`crate::p2p::Engine::start_schedule`]). So any MPI
//! call that makes progress (a blocking receive, a wait on another request, a
//! blocking collective over point-to-point) moves every outstanding nonblocking
//! collective: MPI's progress rule, with no thread.
//!
//! * [`sched`] — the schedule (steps, fences) and its execution by the engine.
//! * [`build`] — one constructor per collective, simple correct algorithms:
//!   dissemination barrier, binomial bcast and reduce (in rank order for
//!   non-commutative ops), recursive doubling allreduce, scan and exscan, ring
//!   allgather(v), all-at-once alltoall(v/w), linear gather(v)/scatter(v),
//!   reduce_scatter as reduce then scatterv.
//! * [`levels`] — barrier, bcast, reduce, allreduce, allgather(v) and alltoall by
//!   levels for communicators spanning nodes: inside each node, among one rank per
//!   node, inside each node again, chained in one schedule.
//! * `pool` — large scratch buffers of finished schedules kept for the next ones.
//!
//! **Tags.** Schedules send on the communicator's collective context (`ctx + 1`,
//! as the blocking collectives) with tag [`tag`]`(seq)`: bit 30 set plus a sequence
//! number the caller keeps per communicator and increments at every nonblocking
//! collective it starts. MPI requires every rank to start the collectives of a
//! communicator in the same order, so the numbers agree; the blocking collectives'
//! tags ([`super::tags`]) are below 2^30, so the two never match each other, and two
//! nonblocking collectives in flight on one communicator differ unless 2^30 of them
//! are outstanding at once. Inside one schedule, the messages between two ranks in
//! one direction are sent and received in the same order, so the non-overtaking
//! rule pairs them.
//!
//! What this module must never do: block, allocate in a progress call (schedules
//! allocate when built), or panic on bad arguments (they are refused with a
//! [`super::CollError`] when the schedule is built).

pub mod build;
pub mod levels;
mod pool;
pub mod sched;

pub use sched::{Buf, Builder, Combine, Poll, Schedule};

/// The first tag of the nonblocking collectives (above every blocking tag).
pub const TAG_BASE: i32 = 1 << 30;

/// The tag of the nonblocking collective number `seq` on a communicator.
pub fn tag(seq: u32) -> i32 {
    TAG_BASE | (seq & (TAG_BASE as u32 - 1)) as i32
}

#[cfg(test)]
mod tests;
