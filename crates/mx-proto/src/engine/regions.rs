//! The large-send region table of codecs with [`Codec::REGIONS`] (Open-MX): a large
//! send is named on the wire by one of 256 regions of the endpoint (an 8-bit id) and the
//! seqnum that region got for this use (8 bits), as Open-MX's library registers a large
//! send's buffer as a region and announces `pulled_rdma_id` / `pulled_rdma_seqnum` in
//! its RNDV. The region is held from the moment the RNDV is sequenced until the send
//! completes (notified, failed or disconnected); a send finding none free waits, and
//! every later send to its peer behind it (as Open-MX queues requests needing
//! resources), until one is released.
//!
//! Must never know a frame's layout: the codec carries `id | seqnum << 8` in its own
//! fields.

use super::*;

/// Regions of an endpoint (`OMX_USER_REGION_MAX`): an 8-bit id names each.
pub const REGIONS: usize = 256;

#[derive(Clone, Copy, Debug)]
struct Slot {
    /// The seqnum of the region's current (or last) use.
    seqnum: u8,
    /// The send request holding it; [`NO_HANDLE`] when free.
    owner: u32,
}

/// The table; see the module docs.
#[derive(Debug, Default)]
pub(super) struct Regions {
    slots: Vec<Slot>,
    /// Free ids, least recently released first: an id is reused as late as possible,
    /// so a stray frame naming an old use finds the region free or renumbered.
    free: VecDeque<u8>,
    /// Peers whose next send waits for a region, oldest first.
    pub(super) blocked: VecDeque<u16>,
}

impl Regions {
    /// A table of `n` regions (1 to [`REGIONS`]).
    pub(super) fn new(n: usize) -> Regions {
        let n = n.clamp(1, REGIONS);
        Regions {
            slots: vec![
                Slot {
                    seqnum: 0,
                    owner: NO_HANDLE,
                };
                n
            ],
            free: (0..n).map(|i| i as u8).collect(),
            blocked: VecDeque::new(),
        }
    }

    /// A region for send `req`: its wire name `id | seqnum << 8`, or `None` when all
    /// are held.
    pub(super) fn alloc(&mut self, req: u32) -> Option<u32> {
        let id = self.free.pop_front()?;
        let s = &mut self.slots[id as usize];
        s.seqnum = s.seqnum.wrapping_add(1);
        s.owner = req;
        Some(id as u32 | (s.seqnum as u32) << 8)
    }

    /// The send that holds the region named `name` in this use; `None` for a free
    /// region, another use's seqnum, or a name that is no region's.
    pub(super) fn owner(&self, name: u32) -> Option<u32> {
        if name > 0xffff {
            return None;
        }
        let s = self.slots.get((name & 0xff) as usize)?;
        (s.owner != NO_HANDLE && s.seqnum as u32 == name >> 8).then_some(s.owner)
    }

    /// Send `req` no longer needs region `name`.
    pub(super) fn release(&mut self, name: u32, req: u32) {
        if self.owner(name) == Some(req) {
            self.slots[(name & 0xff) as usize].owner = NO_HANDLE;
            self.free.push_back(name as u8);
        }
    }

    pub(super) fn has_free(&self) -> bool {
        !self.free.is_empty()
    }

    /// Regions held.
    pub(super) fn held(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    /// Send `h` ended: its region (if it holds one) goes back to the table, and the
    /// peers whose sends waited for one go on.
    pub(super) fn release_region(&mut self, h: u32) {
        let Some(r) = self.req_mut(h) else { return };
        let name = std::mem::replace(&mut r.region, NO_HANDLE);
        if name == NO_HANDLE {
            return;
        }
        self.regions.release(name, h);
        while self.regions.has_free() {
            let Some(peer) = self.regions.blocked.pop_front() else {
                break;
            };
            self.fill_window(peer);
        }
    }

    /// Regions held by large sends (codecs with [`Codec::REGIONS`]; 0 otherwise).
    pub fn regions_held(&self) -> usize {
        self.regions.held()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids are handed out once each, renumbered at each use, reused least recently
    /// released first; a name of an earlier use or a free region has no owner.
    #[test]
    fn regions_allocate_renumber_and_release() {
        let mut t = Regions::new(2);
        let a = t.alloc(10).unwrap();
        let b = t.alloc(11).unwrap();
        assert_eq!((a & 0xff, b & 0xff), (0, 1));
        assert_eq!(t.alloc(12), None);
        assert_eq!((t.owner(a), t.owner(b)), (Some(10), Some(11)));
        t.release(a, 99); // not its owner: kept
        assert_eq!(t.owner(a), Some(10));
        t.release(a, 10);
        assert_eq!(t.owner(a), None);
        let c = t.alloc(12).unwrap();
        assert_eq!(c & 0xff, a & 0xff);
        assert_ne!(c >> 8, a >> 8, "a new use, a new seqnum");
        assert_eq!((t.owner(a), t.owner(c)), (None, Some(12)));
        assert_eq!(t.owner(0x1_0000 | c), None);
        assert_eq!(t.held(), 2);
        assert_eq!(Regions::new(1000).slots.len(), REGIONS);
    }
}
