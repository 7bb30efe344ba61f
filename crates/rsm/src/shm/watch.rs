//! The watcher: one thread per process, started with the first import, that looks every
//! few milliseconds whether the exporter of each import still holds its lock. When one
//! has died it aborts the import (later accesses return `ConnAborted`, waiters wake) and
//! removes the dead exporter's registry entry. This is what bounds the time an importer
//! needs to notice a crashed exporter (well under 100 ms) without a system call on the
//! put and get fast paths.
//!
//! It must never block on anything but its own list's lock, nor keep an import alive
//! (it holds weak references).

use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use super::import::Conn;

/// How often exporters are looked at while there are imports.
const PERIOD: Duration = Duration::from_millis(5);
/// How often the thread looks at an empty list.
const IDLE: Duration = Duration::from_millis(20);

fn list() -> &'static Mutex<Vec<Weak<Conn>>> {
    static LIST: OnceLock<Mutex<Vec<Weak<Conn>>>> = OnceLock::new();
    LIST.get_or_init(|| {
        let _ = std::thread::Builder::new()
            .name("myrix-rsm-watch".into())
            .spawn(run);
        Mutex::new(Vec::new())
    })
}

pub(crate) fn register(c: &Arc<Conn>) {
    list()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Arc::downgrade(c));
}

pub(crate) fn unregister(c: &Arc<Conn>) {
    let me = Arc::downgrade(c);
    list()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|w| !w.ptr_eq(&me) && w.strong_count() > 0);
}

fn run() {
    loop {
        let conns: Vec<Arc<Conn>> = {
            let mut l = list().lock().unwrap_or_else(|p| p.into_inner());
            l.retain(|w| w.strong_count() > 0);
            l.iter().filter_map(Weak::upgrade).collect()
        };
        let idle = conns.is_empty();
        for c in conns {
            if c.check().is_ok() {
                let _ = c.check_owner();
            }
        }
        std::thread::sleep(if idle { IDLE } else { PERIOD });
    }
}
