//! The Myrinet-2000 port synchronization state machine.
//!
//! The specification gives the conditions and the TX/RX actions; its state diagram is a
//! figure the text lost. The states below are derived from them: each state is one
//! combination of "is my receiver in sync" and "what do I know of the remote receiver".
//!
//! ```text
//!                       reset / local_sync_lost (from every state)
//!                                    |
//!                                    v
//!                     +-----------------------------+
//!                     | LOST      TX_LOST   RX_LOST |
//!                     +-----------------------------+
//!          local_sync_found &     |            |   local_sync_found &
//!          last pair was LOST     |            |   last pair not LOST
//!                                 v            v
//!  +-----------------------------+   pair     +-------------------------------+
//!  | SYNC      TX_SYNC RX_REGAIN | ---------> | REGAIN  TX_REGAIN  RX_REGAIN  |
//!  |                             |  not LOST  |                               |
//!  |                             | <--------- |                               |
//!  +-----------------------------+ remote_    +-------------------------------+
//!        ^                         sync_lost            |
//!        |                                              | remote_sync_found
//!        |  remote_sync_lost                            | (sender drops the packet in
//!        |                                              v  progress and emits a GAP)
//!  +-------------------------------------------------------------------------+
//!  | IN_SYNC      TX_GO or TX_STOP (the last STOP/GO received)    RX_GO      |
//!  +-------------------------------------------------------------------------+
//! ```
//!
//! * `local_sync_lost`: reset, or 8 or more errors in the last 892 code-groups.
//! * `local_sync_found`: an aligned COMMA in each of 16 consecutive pairs (only looked
//!   for in LOST, where the receiver hunts for pair alignment).
//! * `remote_sync_lost`: a LOST symbol received.
//! * `remote_sync_found`: 16 consecutive pairs without LOST.
//!
//! Choices the text leaves open, made here: SYNC waits for the first pair without LOST
//! (the remote has found its own sync and stopped saying LOST), then REGAIN waits out the
//! 16 pairs of `remote_sync_found`, so GO is only ever entered from REGAIN, the one
//! transition the specification gives the sender's GAP rule for. Leaving RX_GO for any
//! other action terminates the packet being received, as entering RX_LOST does.
//!
//! This module is pure bookkeeping: it never sees bytes or time.

/// Code-groups in the `local_sync_lost` error window.
pub const ERROR_WINDOW: usize = 892;
/// Errors in the window that lose sync.
pub const ERROR_LIMIT: u32 = 8;
/// Consecutive aligned-COMMA pairs for `local_sync_found`.
pub const COMMA_PAIRS: u8 = 16;
/// Consecutive pairs without LOST for `remote_sync_found`.
pub const NO_LOST_PAIRS: u8 = 16;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum State {
    Lost,
    Sync,
    Regain,
    InSync,
}

impl State {
    pub const fn name(self) -> &'static str {
        match self {
            State::Lost => "LOST",
            State::Sync => "SYNC",
            State::Regain => "REGAIN",
            State::InSync => "IN_SYNC",
        }
    }
    pub const fn rx_action(self) -> RxAction {
        match self {
            State::Lost => RxAction::Lost,
            State::Sync | State::Regain => RxAction::Regain,
            State::InSync => RxAction::Go,
        }
    }
    /// `stopped`: the last flow-control symbol received was STOP.
    pub const fn tx_action(self, stopped: bool) -> TxAction {
        match self {
            State::Lost => TxAction::Lost,
            State::Sync => TxAction::Sync,
            State::Regain => TxAction::Regain,
            State::InSync if stopped => TxAction::Stop,
            State::InSync => TxAction::Go,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TxAction {
    Lost,
    Sync,
    Regain,
    Go,
    Stop,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RxAction {
    Lost,
    Regain,
    Go,
}

/// A state change and the condition that caused it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Transition {
    pub from: State,
    pub to: State,
    pub cause: Cause,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cause {
    Reset,
    LocalSyncLost,
    LocalSyncFound,
    RemoteSyncLost,
    RemoteNotLost,
    RemoteSyncFound,
}

#[derive(Clone, Debug)]
pub struct SyncMachine {
    state: State,
    /// Ring of error flags for the last [`ERROR_WINDOW`] code-groups.
    window: [u64; ERROR_WINDOW.div_ceil(64)],
    pos: usize,
    errors: u32,
    comma_run: u8,
    no_lost_run: u8,
}

impl Default for SyncMachine {
    fn default() -> Self {
        SyncMachine::new()
    }
}

impl SyncMachine {
    /// A machine just out of reset, in LOST.
    pub fn new() -> Self {
        SyncMachine {
            state: State::Lost,
            window: [0; ERROR_WINDOW.div_ceil(64)],
            pos: 0,
            errors: 0,
            comma_run: 0,
            no_lost_run: 0,
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// Errors currently in the window.
    pub fn window_errors(&self) -> u32 {
        self.errors
    }

    pub fn reset(&mut self) -> Option<Transition> {
        let from = self.state;
        *self = SyncMachine::new();
        (from != State::Lost).then_some(Transition {
            from,
            to: State::Lost,
            cause: Cause::Reset,
        })
    }

    fn go(&mut self, to: State, cause: Cause) -> Option<Transition> {
        let from = self.state;
        self.state = to;
        Some(Transition { from, to, cause })
    }

    /// Every received code-group: `error` as [`crate::symbol::RxStep::error`].
    pub fn on_code_group(&mut self, error: bool) -> Option<Transition> {
        let (w, b) = (self.pos / 64, self.pos % 64);
        let old = (self.window[w] >> b) & 1 == 1;
        self.window[w] = (self.window[w] & !(1 << b)) | ((error as u64) << b);
        self.errors = self.errors + error as u32 - old as u32;
        self.pos = (self.pos + 1) % ERROR_WINDOW;
        if error {
            self.comma_run = 0;
        }
        if self.errors >= ERROR_LIMIT && self.state != State::Lost {
            self.comma_run = 0;
            return self.go(State::Lost, Cause::LocalSyncLost);
        }
        None
    }

    /// Every received pair, after [`Self::on_code_group`] for its second code-group.
    pub fn on_pair(&mut self, aligned_comma: bool, lost: bool) -> Option<Transition> {
        self.no_lost_run = if lost {
            0
        } else {
            self.no_lost_run.saturating_add(1)
        };
        match self.state {
            State::Lost => {
                self.comma_run = if aligned_comma { self.comma_run + 1 } else { 0 };
                if self.comma_run >= COMMA_PAIRS {
                    self.comma_run = 0;
                    // A fresh window: errors seen while hunting say nothing of the new sync.
                    self.window = [0; ERROR_WINDOW.div_ceil(64)];
                    self.errors = 0;
                    // remote_sync_found counts only pairs seen with the new alignment.
                    self.no_lost_run = 0;
                    let to = if lost { State::Sync } else { State::Regain };
                    return self.go(to, Cause::LocalSyncFound);
                }
                None
            }
            State::Sync if !lost => self.go(State::Regain, Cause::RemoteNotLost),
            State::Regain | State::InSync if lost => self.go(State::Sync, Cause::RemoteSyncLost),
            State::Regain if self.no_lost_run >= NO_LOST_PAIRS => {
                self.go(State::InSync, Cause::RemoteSyncFound)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(m: &mut SyncMachine, n: usize, comma: bool, lost: bool) -> Vec<Transition> {
        (0..n)
            .filter_map(|_| {
                m.on_code_group(false);
                m.on_code_group(false);
                m.on_pair(comma, lost)
            })
            .collect()
    }

    #[test]
    fn local_sync_found_needs_sixteen_consecutive_comma_pairs() {
        let mut m = SyncMachine::new();
        assert!(pairs(&mut m, 15, true, true).is_empty());
        assert!(pairs(&mut m, 1, false, false).is_empty());
        assert!(pairs(&mut m, 15, true, true).is_empty());
        let t = pairs(&mut m, 1, true, true);
        assert_eq!(t[0].to, State::Sync);
        assert_eq!(t[0].cause, Cause::LocalSyncFound);
    }

    #[test]
    fn lost_to_regain_when_the_remote_is_not_lost() {
        let mut m = SyncMachine::new();
        let t = pairs(&mut m, 16, true, false);
        assert_eq!(t.last().unwrap().to, State::Regain);
    }

    #[test]
    fn full_handshake_and_back() {
        let mut m = SyncMachine::new();
        assert_eq!(pairs(&mut m, 16, true, true)[0].to, State::Sync);
        assert_eq!(pairs(&mut m, 1, true, false)[0].to, State::Regain);
        assert!(pairs(&mut m, 14, true, false).is_empty());
        let t = pairs(&mut m, 1, true, false);
        assert_eq!(
            (t[0].to, t[0].cause),
            (State::InSync, Cause::RemoteSyncFound)
        );
        let t = pairs(&mut m, 1, true, true);
        assert_eq!((t[0].from, t[0].to), (State::InSync, State::Sync));
        // REGAIN -> SYNC on LOST too.
        pairs(&mut m, 1, true, false);
        assert_eq!(m.state(), State::Regain);
        assert_eq!(pairs(&mut m, 1, true, true)[0].to, State::Sync);
    }

    #[test]
    fn eight_errors_in_892_code_groups_lose_sync_seven_do_not() {
        let mut m = SyncMachine::new();
        pairs(&mut m, 16, true, false);
        pairs(&mut m, 16, false, false);
        assert_eq!(m.state(), State::InSync);
        // 7 errors spread over a window: still in sync.
        for i in 0..ERROR_WINDOW {
            assert_eq!(m.on_code_group(i % 120 == 0 && i < 840), None);
        }
        assert_eq!(m.window_errors(), 7);
        // Errors 892 apart never accumulate.
        for i in 0..(ERROR_WINDOW * 20) {
            assert_eq!(m.on_code_group(i % ERROR_WINDOW == 0), None);
        }
        // 8 within the window do.
        let mut t = None;
        for i in 0..ERROR_WINDOW {
            t = t.or(m.on_code_group(i % 100 == 0));
        }
        assert_eq!(t.unwrap().cause, Cause::LocalSyncLost);
        assert_eq!(m.state(), State::Lost);
    }

    #[test]
    fn errors_lose_sync_from_sync_and_regain_too() {
        for lost in [true, false] {
            let mut m = SyncMachine::new();
            pairs(&mut m, 16, true, lost);
            let from = m.state();
            assert_eq!(from, if lost { State::Sync } else { State::Regain });
            let t = (0..ERROR_LIMIT)
                .filter_map(|_| m.on_code_group(true))
                .last()
                .unwrap();
            assert_eq!(
                (t.from, t.to, t.cause),
                (from, State::Lost, Cause::LocalSyncLost)
            );
        }
    }

    #[test]
    fn reset_goes_to_lost() {
        let mut m = SyncMachine::new();
        assert_eq!(m.reset(), None);
        pairs(&mut m, 16, true, false);
        assert_eq!(m.reset().unwrap().to, State::Lost);
        assert_eq!(m.state().tx_action(false), TxAction::Lost);
        assert_eq!(m.state().rx_action(), RxAction::Lost);
    }
}
