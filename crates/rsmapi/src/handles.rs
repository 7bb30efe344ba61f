//! Handles given to C: numbers, never pointers to our objects.
//!
//! A C program may pass anything where a handle is expected: NULL, a handle already
//! released, one of another kind, or a stray pointer. So a handle is a number that
//! names a slot of a table, with the slot's generation and the handle's kind in it;
//! the library looks it up and never dereferences what the caller gave. A released
//! slot's generation moves on, so an old handle to it no longer matches, even after
//! the slot is reused.
//!
//! Layout of a handle (a `usize`, given to C as an opaque pointer):
//! bits 0–3 the kind (never 0, so no handle is NULL), bits 4–23 the slot, the bits
//! above the generation (40 bits on 64-bit targets, 8 on 32-bit ones).

use std::sync::{Arc, Mutex, MutexGuard};

/// What a handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Kind {
    Controller = 1,
    Export = 2,
    Import = 3,
    LocalMemory = 4,
    Barrier = 5,
}

const KIND_BITS: u32 = 4;
const SLOT_BITS: u32 = 20;
const MAX_SLOTS: usize = 1 << SLOT_BITS;
const GEN_SHIFT: u32 = KIND_BITS + SLOT_BITS;
const GEN_MASK: usize = usize::MAX >> GEN_SHIFT;

/// The kind a handle claims to be, if any (no table is consulted).
pub fn kind_of(handle: usize) -> Option<Kind> {
    match handle & ((1 << KIND_BITS) - 1) {
        1 => Some(Kind::Controller),
        2 => Some(Kind::Export),
        3 => Some(Kind::Import),
        4 => Some(Kind::LocalMemory),
        5 => Some(Kind::Barrier),
        _ => None,
    }
}

struct Slot<T> {
    generation: usize,
    item: Option<Arc<T>>,
}

struct Inner<T> {
    slots: Vec<Slot<T>>,
    free: Vec<usize>,
}

/// Live objects of one kind.
pub struct Table<T> {
    kind: Kind,
    inner: Mutex<Inner<T>>,
}

impl<T> Table<T> {
    pub const fn new(kind: Kind) -> Table<T> {
        Table {
            kind,
            inner: Mutex::new(Inner {
                slots: Vec::new(),
                free: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
        // A panic never happens while the lock is held; if one did, the table is
        // still consistent (every change is one assignment).
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn encode(&self, slot: usize, generation: usize) -> usize {
        (generation << GEN_SHIFT) | (slot << KIND_BITS) | self.kind as usize
    }

    /// (slot, generation) if `handle` is of this table's kind.
    fn decode(&self, handle: usize) -> Option<(usize, usize)> {
        if kind_of(handle) != Some(self.kind) {
            return None;
        }
        let slot = (handle >> KIND_BITS) & (MAX_SLOTS - 1);
        Some((slot, handle >> GEN_SHIFT))
    }

    /// A new handle for `item`; `None` when every slot is taken.
    pub fn insert(&self, item: T) -> Option<usize> {
        let mut t = self.lock();
        let slot = match t.free.pop() {
            Some(s) => s,
            None if t.slots.len() < MAX_SLOTS => {
                t.slots.push(Slot {
                    generation: 1,
                    item: None,
                });
                t.slots.len() - 1
            }
            None => return None,
        };
        let s = &mut t.slots[slot];
        s.item = Some(Arc::new(item));
        let generation = s.generation;
        drop(t);
        Some(self.encode(slot, generation))
    }

    /// The object `handle` names, if it is live.
    pub fn get(&self, handle: usize) -> Option<Arc<T>> {
        let (slot, generation) = self.decode(handle)?;
        let t = self.lock();
        let s = t.slots.get(slot)?;
        if s.generation != generation {
            return None;
        }
        s.item.clone()
    }

    /// Takes the object out: `handle` and every copy of it are dead from now on.
    pub fn remove(&self, handle: usize) -> Option<Arc<T>> {
        let (slot, generation) = self.decode(handle)?;
        let mut t = self.lock();
        let s = t.slots.get_mut(slot)?;
        if s.generation != generation || s.item.is_none() {
            return None;
        }
        let item = s.item.take();
        // Generation 0 is never handed out, so a zeroed handle never matches.
        s.generation = match (s.generation + 1) & GEN_MASK {
            0 => 1,
            g => g,
        };
        t.free.push(slot);
        item
    }

    /// The handles of every live object (for clean-up and tests).
    pub fn handles(&self) -> Vec<usize> {
        let t = self.lock();
        t.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.item.is_some())
            .map(|(i, s)| self.encode(i, s.generation))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_released_handle_is_dead_even_after_its_slot_is_reused() {
        let t: Table<u32> = Table::new(Kind::Import);
        let a = t.insert(7).unwrap();
        assert_eq!(kind_of(a), Some(Kind::Import));
        assert_eq!(*t.get(a).unwrap(), 7);
        assert_eq!(*t.remove(a).unwrap(), 7);
        assert!(t.get(a).is_none());
        assert!(t.remove(a).is_none());
        let b = t.insert(8).unwrap();
        assert_ne!(a, b);
        assert!(t.get(a).is_none());
        assert_eq!(*t.get(b).unwrap(), 8);
        assert_eq!(t.handles(), vec![b]);
    }

    #[test]
    fn forged_and_foreign_handles_are_refused() {
        let t: Table<u32> = Table::new(Kind::Export);
        let other: Table<u32> = Table::new(Kind::Import);
        let h = t.insert(1).unwrap();
        let o = other.insert(2).unwrap();
        assert!(t.get(o).is_none());
        assert!(other.get(h).is_none());
        for forged in [
            0,
            1,
            2,
            0xdead_beef,
            usize::MAX,
            h + 16,
            h ^ (1 << GEN_SHIFT),
        ] {
            if forged != h {
                assert!(t.get(forged).is_none(), "{forged:#x}");
            }
        }
    }
}
