//! The progress thread: an endpoint shared with a thread that keeps retransmission and
//! acknowledgements going while the application computes. It must never hold the lock
//! for longer than one progress call.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::Endpoint;
use crate::engine::Codec;

impl<C: Codec + Send + 'static> Endpoint<C> {
    /// Shares the endpoint with a progress thread that polls it every `interval` while the
    /// application does not; lock the returned mutex to use the endpoint.
    pub fn into_shared(self, interval: Duration) -> (Arc<Mutex<Endpoint<C>>>, ProgressThread) {
        let shared = Arc::new(Mutex::new(self));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (s2, st2) = (shared.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            while !st2.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(mut ep) = s2.try_lock() {
                    let _ = ep.progress();
                }
                std::thread::sleep(interval);
            }
        });
        (
            shared,
            ProgressThread {
                stop,
                handle: Some(handle),
            },
        )
    }
}

/// Stops the progress thread when dropped.
pub struct ProgressThread {
    stop: Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Drop for ProgressThread {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
