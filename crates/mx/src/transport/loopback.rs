//! `self:` — an endpoint sending to itself. Frames wait in a queue in memory.

use std::collections::VecDeque;
use std::io;

use super::{Loc, Transport, Verdict};

#[derive(Default)]
pub struct Loopback {
    queue: VecDeque<Vec<u8>>,
    spare: Vec<Vec<u8>>,
}

impl Transport for Loopback {
    fn locator(&self) -> String {
        "self:".into()
    }
    fn mtu(&self) -> usize {
        32 * 1024 + 64
    }
    fn reliable(&self) -> bool {
        true
    }
    fn resolve(&mut self, _location: &str, _endpoint: u8) -> io::Result<Loc> {
        Ok(Loc::Myself)
    }
    fn send(&mut self, _to: &Loc, frame: &[u8]) -> io::Result<bool> {
        let mut v = self.spare.pop().unwrap_or_default();
        v.clear();
        v.extend_from_slice(frame);
        self.queue.push_back(v);
        Ok(true)
    }
    #[inline]
    fn poll_recv<F: FnMut(&Loc, &[u8]) -> Verdict>(
        &mut self,
        max: usize,
        mut deliver: F,
    ) -> io::Result<usize> {
        let mut n = 0;
        while n < max {
            let Some(f) = self.queue.pop_front() else {
                break;
            };
            n += 1;
            if deliver(&Loc::Myself, &f) == Verdict::Busy {
                self.queue.push_front(f);
                break;
            }
            if self.spare.len() < 16 {
                self.spare.push(f);
            }
        }
        Ok(n)
    }
}
