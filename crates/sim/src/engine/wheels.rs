//! A timing wheel: a ring of work lists, one per tick, as long as the longest delay
//! scheduled on it, so that a tick touches only what is due in it. It never allocates
//! once its lists have grown, and never orders entries within a tick beyond push order.

pub(crate) struct Wheel<T> {
    slots: Vec<Vec<T>>,
}

impl<T: Clone> Wheel<T> {
    /// A wheel for delays below `len` ticks.
    pub fn new(len: usize) -> Wheel<T> {
        Wheel {
            slots: vec![Vec::new(); len],
        }
    }
}

impl<T> Wheel<T> {
    #[inline]
    pub fn push(&mut self, at: u64, x: T) {
        let w = self.slots.len();
        self.slots[at as usize % w].push(x);
    }

    /// The entries due at `at`; give the list back with [`Self::put_back`] to keep its
    /// capacity.
    #[inline]
    pub fn take(&mut self, at: u64) -> Vec<T> {
        let w = self.slots.len();
        std::mem::take(&mut self.slots[at as usize % w])
    }

    #[inline]
    pub fn put_back(&mut self, at: u64, mut list: Vec<T>) {
        list.clear();
        let w = self.slots.len();
        self.slots[at as usize % w] = list;
    }
}
