//! A small hasher for the engine's integer keys (send ids, message tokens, context
//! ids): one rotate, xor and multiply per word, instead of SipHash. The keys come from
//! this process's own counters and from the fabric's sequence numbers, not from
//! anything an attacker chooses, so flooding resistance buys nothing here.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// An odd constant with well-spread bits (from the golden ratio).
const K: u64 = 0x9e37_79b9_7f4a_7c15;

#[derive(Default, Clone, Copy)]
pub(crate) struct IntHasher(u64);

impl IntHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(26) ^ w).wrapping_mul(K);
    }
}

impl Hasher for IntHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // The table takes its bucket from the low bits and a tag from the top ones:
        // fold the well-mixed high half down.
        self.0 ^ (self.0 >> 32)
    }
}

/// A map with integer keys and [`IntHasher`].
pub(crate) type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn sequential_keys_spread_over_buckets() {
        let b = BuildHasherDefault::<IntHasher>::default();
        let mut seen = std::collections::HashSet::new();
        for k in 0u64..1024 {
            seen.insert(b.hash_one(k) & 1023);
        }
        assert!(seen.len() > 600, "{} of 1024 buckets", seen.len());
        let mut m: IntMap<u64, u64> = IntMap::default();
        for k in 0..100 {
            m.insert(k, k * 2);
        }
        assert_eq!(m.get(&42), Some(&84));
    }
}
