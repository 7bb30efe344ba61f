//! `omx+shm:IFNAME` — one endpoint reaching both kinds of peer, as an Open-MX endpoint
//! does: the endpoints of this host through shared memory ([`Shm`]), the endpoints of
//! other hosts through raw Ethernet on `IFNAME` in Open-MX's frames ([`Eth`], whole
//! frames). The caller picks the path per peer by the address it connects to: a
//! shared-memory locator (`shm:myrix-…`) or a MAC (`omx:aabbccddeeff`).
//!
//! Both paths carry the same frames (the endpoint's codec, Open-MX's): over shared
//! memory the Ethernet head's destination MAC is simply left zero. The link is lossy on
//! one side, so the engine's reliability is on for every peer (acknowledgements and
//! timers cost a shared-memory peer a little; nothing is resent there, nothing being
//! lost). The MTU is the smaller of the two.
//!
//! The shared-memory segment is the host's (named by [`shm::host_nic`] and the endpoint
//! id), so endpoint ids stay unique per host; the endpoint's NIC id is the interface's
//! MAC.

use std::io;

use super::eth::{parse_mac, Eth};
use super::shm::{self, Shm};
use super::{Loc, Transport, Verdict};

pub struct OmxShm {
    shm: Shm,
    eth: Eth,
    /// Poll shared memory first on even rounds, Ethernet first on odd ones, so neither
    /// starves the other of the `max` frames a poll may take.
    turn: bool,
}

impl OmxShm {
    /// Endpoint `ep`'s shared-memory segment and a raw socket on `ifname`.
    pub fn open(ifname: &str, ep: u8) -> io::Result<OmxShm> {
        // The raw socket first: without CAP_NET_RAW no segment is left to clean up.
        let eth = Eth::open(ifname, true)?;
        let shm = Shm::open(shm::host_nic(), ep)?;
        Ok(OmxShm {
            shm,
            eth,
            turn: false,
        })
    }

    pub fn eth(&self) -> &Eth {
        &self.eth
    }
}

impl Transport for OmxShm {
    fn locator(&self) -> String {
        self.eth.locator()
    }
    fn mtu(&self) -> usize {
        self.eth.mtu().min(self.shm.mtu())
    }
    fn reliable(&self) -> bool {
        false
    }
    fn resolve(&mut self, location: &str, endpoint: u8) -> io::Result<Loc> {
        // A MAC is a peer behind the interface (or this interface's own MAC: the NIC
        // path); anything else names a shared-memory segment of this host.
        if parse_mac(location).is_some() {
            self.eth.resolve(location, endpoint)
        } else {
            self.shm.resolve(location, endpoint)
        }
    }
    #[inline]
    fn send(&mut self, to: &Loc, frame: &[u8]) -> io::Result<bool> {
        match to {
            Loc::Shm(_) => self.shm.send(to, frame),
            _ => {
                self.shm.moved_elsewhere();
                self.eth.send(to, frame)
            }
        }
    }
    #[inline]
    fn frame_slot(&mut self, to: &Loc) -> io::Result<Option<&mut [u8]>> {
        match to {
            Loc::Shm(_) => self.shm.frame_slot(to),
            _ => Ok(None),
        }
    }
    #[inline]
    fn commit_slot(&mut self, to: &Loc, len: usize) {
        if let Loc::Shm(_) = to {
            self.shm.commit_slot(to, len)
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        self.shm.flush()?;
        self.eth.flush()
    }
    fn poll_recv<F: FnMut(&Loc, &[u8]) -> Verdict>(
        &mut self,
        max: usize,
        mut deliver: F,
    ) -> io::Result<usize> {
        // Shared memory gives the CPU away after a while without frames (see `shm`):
        // frames from the link count as activity too, so it is told before it polls.
        self.turn = !self.turn;
        let (n, m) = if self.turn {
            let n = self.shm.poll_recv(max, &mut deliver)?;
            let m = self.eth.poll_recv(max - n, &mut deliver)?;
            if m > 0 {
                self.shm.moved_elsewhere();
            }
            (n, m)
        } else {
            let m = self.eth.poll_recv(max, &mut deliver)?;
            if m > 0 {
                self.shm.moved_elsewhere();
            }
            (m, self.shm.poll_recv(max - m, &mut deliver)?)
        };
        Ok(n + m)
    }
    fn poll_gone(&mut self) -> Option<Loc> {
        self.shm.poll_gone()
    }
}
