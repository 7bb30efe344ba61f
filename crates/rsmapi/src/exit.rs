//! The process's exit: what a program's last calls left unacknowledged on a network
//! controller reaches the other nodes before the process goes (issue 21, docs/rsm.md
//! "Disconnect drains"). `rsm_memseg_import_disconnect` and `rsm_release_controller`
//! drain by themselves; this is for a program that returns from `main` (or calls
//! `exit`) with imports still connected or controllers still held: its last puts,
//! signals and disconnects would otherwise be lost with their frames, with nothing
//! left to resend them.
//!
//! An `atexit` handler, registered by the first `rsm_get_controller`, disconnects the
//! imports still connected (each drains its writes and signals), drains every
//! controller still held and (with `MYRIX_RSM_BYE=1`) tells the other nodes this one
//! leaves (a bye, so none waits for its acknowledgements; docs/rsm.md "Leaving: the
//! bye"). Each wait is bounded by the engine's retry limit, so a
//! node that is gone delays the exit by at most that, never hangs it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Once};

use crate::objects::{forget_pollfds, lock, CONTROLLERS, IMPORTS};

/// The process that registered the handler: a child made by `fork` inherits the
/// handler and the tables but not the threads, and must not send on the parent's
/// endpoints at its own exit.
static OWNER: AtomicU32 = AtomicU32::new(0);
static REGISTER: Once = Once::new();

/// Registers the exit handler (once per process).
pub fn register() {
    REGISTER.call_once(|| {
        OWNER.store(std::process::id(), Ordering::Relaxed);
        // SAFETY: registers a function with the C signature atexit wants; it never
        // unwinds into C (caught below).
        #[allow(unsafe_code)]
        unsafe {
            libc::atexit(at_exit);
        }
    });
}

extern "C" fn at_exit() {
    if std::process::id() != OWNER.load(Ordering::Relaxed) {
        return;
    }
    let _ = std::panic::catch_unwind(drain_all);
}

/// Disconnects the imports still connected and drains the controllers still held,
/// telling the other nodes that this one leaves ([`myrix_rsm::Controller::leave`]).
pub fn drain_all() {
    for h in IMPORTS.handles() {
        let Some(obj) = IMPORTS.get(h) else { continue };
        // A mapped import (shm) has nothing on the network to drain.
        if lock(&obj.mapping).is_some() {
            continue;
        }
        drop(obj);
        let Some(obj) = IMPORTS.remove(h) else {
            continue;
        };
        forget_pollfds(h);
        // Another thread inside a call on it: it is still in use, and the exit is
        // that thread's to order; the controller drain below covers its frames.
        if let Ok(o) = Arc::try_unwrap(obj) {
            let _ = o.import.disconnect();
        }
    }
    for h in CONTROLLERS.handles() {
        if let Some(c) = CONTROLLERS.get(h) {
            // The process goes: its peers are told (a bye), so none waits for it.
            c.leave();
        }
    }
}
