//! A timing wheel: a ring of work lists, one per tick, longer than the longest delay
//! scheduled on it, so that a tick touches only what is due in it. Its length is a power
//! of two (a mask, not a division, per tick); it never allocates once its lists have
//! grown, and never orders entries within a tick beyond push order.

pub(crate) struct Wheel<T> {
    slots: Vec<Vec<T>>,
    mask: usize,
}

impl<T: Clone> Wheel<T> {
    /// A wheel for delays below `len` ticks.
    pub fn new(len: usize) -> Wheel<T> {
        let len = len.max(1).next_power_of_two();
        Wheel {
            slots: vec![Vec::new(); len],
            mask: len - 1,
        }
    }
}

impl<T> Wheel<T> {
    #[inline]
    pub fn push(&mut self, at: u64, x: T) {
        let i = at as usize & self.mask;
        self.slots[i].push(x);
    }

    /// The entries due at `at`, with their slot; give the list back with
    /// [`Self::put_back`] to keep its capacity.
    #[inline]
    pub fn take(&mut self, at: u64) -> (usize, Vec<T>) {
        let i = at as usize & self.mask;
        (i, std::mem::take(&mut self.slots[i]))
    }

    #[inline]
    pub fn put_back(&mut self, slot: usize, mut list: Vec<T>) {
        list.clear();
        self.slots[slot] = list;
    }
}
