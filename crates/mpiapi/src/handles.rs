//! Handles for the objects a program creates (communicators, groups, datatypes,
//! ops, requests…): a table per kind, each kind in its own range of handle values
//! so a handle of one kind is never mistaken for another, and none collides with the
//! ABI's predefined values (all below 0x1000).
//!
//! A freed slot is reused with a new generation, so a stale handle is refused
//! (`None`) instead of reaching another object.

use crate::abi::Handle;

/// The first handle value of each kind. A kind holds up to `1 << 24` live objects;
/// the generation takes the bits above.
pub mod base {
    pub const COMM: usize = 0x1_000_000;
    pub const GROUP: usize = 0x2_000_000;
    pub const DATATYPE: usize = 0x3_000_000;
    pub const OP: usize = 0x4_000_000;
    pub const REQUEST: usize = 0x5_000_000;
    pub const MESSAGE: usize = 0x6_000_000;
    pub const ERRHANDLER: usize = 0x7_000_000;
    pub const INFO: usize = 0x8_000_000;
    pub const WIN: usize = 0x9_000_000;
    pub const KEYVAL: usize = 0xa_000_000;
    pub const FILE: usize = 0xb_000_000;
    pub const SESSION: usize = 0xc_000_000;
}

const INDEX_BITS: u32 = 24;
const INDEX_MASK: usize = (1 << INDEX_BITS) - 1;
/// Kinds are 0x1..=0xf in bits 24..28; generations live above bit 28.
const KIND_MASK: usize = 0xf << INDEX_BITS;
const GEN_SHIFT: u32 = 28;
/// Generations wrap within 31 bits so handles stay positive as `int`s on 32-bit
/// Fortran-style conversions (`MPI_Comm_c2f` returns the handle as an int).
const GEN_MAX: usize = (1 << 3) - 1;

struct Slot<T> {
    gen: usize,
    value: Option<T>,
}

/// The live objects of one kind.
pub struct Table<T> {
    base: usize,
    slots: Vec<Slot<T>>,
    free: Vec<usize>,
}

impl<T> Table<T> {
    pub const fn new(base: usize) -> Table<T> {
        Table {
            base,
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    #[inline]
    fn handle(&self, index: usize, gen: usize) -> Handle {
        self.base | index | (gen << GEN_SHIFT)
    }

    #[inline]
    fn index(&self, h: Handle) -> Option<(usize, usize)> {
        if h & KIND_MASK != self.base {
            return None;
        }
        Some((h & INDEX_MASK, h >> GEN_SHIFT))
    }

    /// Stores `value`; `None` when the kind's table is full.
    #[inline]
    pub fn insert(&mut self, value: T) -> Option<Handle> {
        if let Some(i) = self.free.pop() {
            self.slots[i].value = Some(value);
            return Some(self.handle(i, self.slots[i].gen));
        }
        let i = self.slots.len();
        if i > INDEX_MASK {
            return None;
        }
        self.slots.push(Slot {
            gen: 0,
            value: Some(value),
        });
        Some(self.handle(i, 0))
    }

    #[inline]
    pub fn get(&self, h: Handle) -> Option<&T> {
        let (i, gen) = self.index(h)?;
        let s = self.slots.get(i)?;
        (s.gen == gen).then_some(())?;
        s.value.as_ref()
    }

    #[inline]
    pub fn get_mut(&mut self, h: Handle) -> Option<&mut T> {
        let (i, gen) = self.index(h)?;
        let s = self.slots.get_mut(i)?;
        (s.gen == gen).then_some(())?;
        s.value.as_mut()
    }

    /// Drops the object in its slot if `pred` holds for it, with one lookup (no move
    /// out): `Some(true)` when dropped, `Some(false)` when `pred` said no, `None` when
    /// `h` names no live object.
    #[inline]
    pub fn discard_if(&mut self, h: Handle, pred: impl FnOnce(&T) -> bool) -> Option<bool> {
        let (i, gen) = self.index(h)?;
        let s = self.slots.get_mut(i)?;
        match &s.value {
            Some(v) if s.gen == gen => {
                if !pred(v) {
                    return Some(false);
                }
            }
            _ => return None,
        }
        s.value = None;
        s.gen = if s.gen >= GEN_MAX { 0 } else { s.gen + 1 };
        self.free.push(i);
        Some(true)
    }

    /// As [`Table::discard_if`] with `pred` always true, but the object is forgotten
    /// in its slot, not dropped: for a caller that knows it owns no memory (else it
    /// leaks), so that freeing it runs no drop glue. Whether `h` named a live object.
    #[inline(always)]
    pub fn forget(&mut self, h: Handle) -> bool {
        let Some((i, gen)) = self.index(h) else {
            return false;
        };
        let Some(s) = self.slots.get_mut(i).filter(|s| s.gen == gen) else {
            return false;
        };
        if s.value.is_none() {
            return false;
        }
        // SAFETY: `s.value` is a valid place; writing over it without dropping the
        // object only leaks what that owned (nothing, by the caller's word). Unlike
        // `mem::forget(s.value.take())`, nothing is copied out.
        unsafe { std::ptr::write(&mut s.value, None) };
        s.gen = if s.gen >= GEN_MAX { 0 } else { s.gen + 1 };
        self.free.push(i);
        true
    }

    /// Takes the object out; its handle becomes stale.
    pub fn remove(&mut self, h: Handle) -> Option<T> {
        let (i, gen) = self.index(h)?;
        let s = self.slots.get_mut(i)?;
        if s.gen != gen {
            return None;
        }
        let v = s.value.take()?;
        s.gen = if s.gen >= GEN_MAX { 0 } else { s.gen + 1 };
        self.free.push(i);
        Some(v)
    }

    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_and_foreign_handles_are_refused() {
        let mut t = Table::new(base::COMM);
        let a = t.insert(1u32).unwrap();
        assert_eq!(t.get(a), Some(&1));
        assert_eq!(t.remove(a), Some(1));
        assert_eq!(t.get(a), None);
        let b = t.insert(2).unwrap();
        assert_ne!(a, b);
        assert_eq!(t.get(b), Some(&2));
        assert_eq!(t.get(b - base::COMM + base::GROUP), None);
        assert_eq!(t.get(0x101), None);
        assert!(i32::try_from(b).is_ok());
        let c = t.insert(4).unwrap();
        assert_eq!(t.discard_if(c, |&v| v == 5), Some(false));
        assert_eq!(t.discard_if(c, |&v| v == 4), Some(true));
        assert_eq!(t.discard_if(c, |_| true), None);
        assert_eq!(t.len(), 1);
        let d = t.insert(6).unwrap();
        assert!(t.forget(d));
        assert!(!t.forget(d));
        assert_eq!(t.get(d), None);
        assert_eq!(t.len(), 1);
    }
}
