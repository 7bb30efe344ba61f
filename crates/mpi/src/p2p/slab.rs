//! A generational slab: values in reused slots, named by 64-bit keys
//! (`generation << 32 | index`). A key whose slot was freed and reused no longer
//! resolves. Must never allocate once it has held its peak number of values.

pub(crate) struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    len: usize,
}

struct Slot<T> {
    gen: u32,
    val: Option<T>,
}

fn split(key: u64) -> (usize, u32) {
    ((key & 0xffff_ffff) as usize, (key >> 32) as u32)
}

impl<T> Slab<T> {
    pub(crate) fn new() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Stores `val`; returns its key (never 0: generations start at 1). Always
    /// inlined: out of line, the value is built on the caller's stack and copied
    /// into its slot by a call to `memcpy` (once per message).
    #[inline(always)]
    pub(crate) fn insert(&mut self, val: T) -> u64 {
        self.len += 1;
        if let Some(i) = self.free.pop() {
            let s = &mut self.slots[i as usize];
            s.val = Some(val);
            (u64::from(s.gen) << 32) | u64::from(i)
        } else {
            let i = self.slots.len() as u32;
            self.slots.push(Slot {
                gen: 1,
                val: Some(val),
            });
            (1u64 << 32) | u64::from(i)
        }
    }

    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<&T> {
        let (i, g) = split(key);
        self.slots
            .get(i)
            .filter(|s| s.gen == g)
            .and_then(|s| s.val.as_ref())
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, key: u64) -> Option<&mut T> {
        let (i, g) = split(key);
        self.slots
            .get_mut(i)
            .filter(|s| s.gen == g)
            .and_then(|s| s.val.as_mut())
    }

    /// Frees the value at `key` if `pred` holds for it, with one lookup and no move
    /// of the value: `take` gets what it needs from it in its slot. The value is then
    /// forgotten, not dropped: `take` must leave nothing in it that owns memory (or
    /// it leaks), which keeps the value's drop glue off a path that has emptied it.
    /// `Err(())` when `key` does not resolve, `Ok(None)` when `pred` said no.
    #[inline(always)]
    pub(crate) fn take_emptied<R>(
        &mut self,
        key: u64,
        pred: impl FnOnce(&T) -> bool,
        take: impl FnOnce(&mut T) -> R,
    ) -> Result<Option<R>, ()> {
        let (i, g) = split(key);
        let Some(s) = self.slots.get_mut(i).filter(|s| s.gen == g) else {
            return Err(());
        };
        let r = match &mut s.val {
            Some(v) if pred(v) => take(v),
            Some(_) => return Ok(None),
            None => return Err(()),
        };
        // SAFETY: `s.val` is a valid place; writing over it without dropping the
        // value only leaks what it still owns (nothing, by `take`'s contract), and
        // copies nothing out (as `mem::forget(s.val.take())` would).
        unsafe { std::ptr::write(&mut s.val, None) };
        s.gen = s.gen.wrapping_add(1).max(1);
        self.free.push(i as u32);
        self.len -= 1;
        Ok(Some(r))
    }

    pub(crate) fn remove(&mut self, key: u64) -> Option<T> {
        let (i, g) = split(key);
        let s = self.slots.get_mut(i).filter(|s| s.gen == g)?;
        let v = s.val.take()?;
        s.gen = s.gen.wrapping_add(1).max(1);
        self.free.push(i as u32);
        self.len -= 1;
        Some(v)
    }

    /// The key of the live value in slot `i` whose generation ends in the bits
    /// `gen & mask`: for a caller that names values by a narrower handle (the C
    /// layer's request handles keep 3 bits of the generation), so a stale handle is
    /// refused unless its slot was reused a multiple of `mask + 1` times since.
    #[inline]
    pub(crate) fn key_at(&self, i: usize, gen: u32, mask: u32) -> Option<u64> {
        let s = self.slots.get(i)?;
        (s.val.is_some() && s.gen & mask == gen & mask).then(|| (u64::from(s.gen) << 32) | i as u64)
    }

    /// Keys of the live values for which `pred` holds, appended to `out`.
    pub(crate) fn keys_where(&self, out: &mut Vec<u64>, mut pred: impl FnMut(&T) -> bool) {
        for (i, s) in self.slots.iter().enumerate() {
            if let Some(v) = &s.val {
                if pred(v) {
                    out.push((u64::from(s.gen) << 32) | i as u64);
                }
            }
        }
    }

    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.iter_mut().filter_map(|s| s.val.as_mut())
    }
}

#[cfg(test)]
mod tests {
    use super::Slab;

    #[test]
    fn stale_keys_do_not_resolve() {
        let mut s = Slab::new();
        let a = s.insert(1);
        assert_ne!(a, 0);
        assert_eq!(s.remove(a), Some(1));
        let b = s.insert(2);
        assert_ne!(a, b);
        assert!(s.get(a).is_none());
        assert_eq!(s.get(b), Some(&2));
        assert_eq!(s.remove(a), None);
        assert_eq!(s.len(), 1);
        let c = s.insert(5);
        assert_eq!(s.take_emptied(c, |&v| v == 4, |v| *v), Ok(None));
        assert_eq!(s.take_emptied(c, |&v| v == 5, |v| *v + 1), Ok(Some(6)));
        assert_eq!(s.take_emptied(c, |_| true, |v| *v), Err(()));
        assert_eq!(s.len(), 1);
        let d = s.insert(7);
        let (i, g) = ((d & 0xffff_ffff) as usize, (d >> 32) as u32);
        assert_eq!(s.key_at(i, g, 7), Some(d));
        assert_eq!(s.key_at(i, g + 1, 7), None);
        assert_eq!(s.key_at(i + 1, g, 7), None);
        assert_eq!(s.remove(d), Some(7));
        assert_eq!(s.key_at(i, g, 7), None);
    }
}
