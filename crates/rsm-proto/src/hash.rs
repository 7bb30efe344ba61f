//! A cheap keyed hash for the engine's tables (peers by address, imports, flushes and
//! gets by id, segments), which are looked up several times per frame.
//!
//! The standard `HashMap` hashes with SipHash-1-3: about 120 instructions per lookup
//! of a `u32` or a MAC address, 12 % of all the instructions of an 8-byte RSM
//! ping-pong over raw Ethernet (docs/results-rsm-net.md, session 23). Keys here are a few
//! words, so a multiply-rotate per word does. It is keyed per table from the standard
//! library's random keys, so keys a peer chooses (its address, the ids it names) do not
//! give it collisions it can predict; what it cannot give is SipHash's strength
//! against an attacker who observes timing, which the engine's tables (bounded by the
//! node table and the connections it accepts) do not need.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};

/// A `HashMap` with [`FastState`].
pub type FastMap<K, V> = HashMap<K, V, FastState>;
/// A `HashSet` with [`FastState`].
pub type FastSet<K> = HashSet<K, FastState>;

/// Builds [`FastHasher`]s from a random key drawn when the table is made.
#[derive(Debug, Clone, Copy)]
pub struct FastState(u64);

impl Default for FastState {
    fn default() -> FastState {
        // The standard library's per-table random keys, folded into one word.
        FastState(RandomState::new().hash_one(0x0052_534d_5f6b_6579_u64) | 1)
    }
}

impl BuildHasher for FastState {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher(self.0)
    }
}

/// One word of state; each word of the key is mixed in by a rotate, xor and multiply.
#[derive(Debug, Clone, Copy)]
pub struct FastHasher(u64);

/// An odd constant with its bits spread (2^64 over the golden ratio).
const MUL: u64 = 0x9e37_79b9_7f4a_7c15;

impl FastHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(23) ^ w).wrapping_mul(MUL);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }
    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }
    #[inline]
    fn write_u16(&mut self, v: u16) {
        self.add(u64::from(v));
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }
    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // The multiply leaves its best bits high; the table indexes by the low ones.
        self.0 ^ (self.0 >> 29)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_equal_and_tables_work() {
        let s = FastState::default();
        assert_eq!(s.hash_one(42u32), s.hash_one(42u32));
        assert_eq!(
            s.hash_one([1u8, 2, 3, 4, 5, 6]),
            s.hash_one([1u8, 2, 3, 4, 5, 6])
        );
        assert_ne!(s.hash_one(1u32), s.hash_one(2u32));
        assert_ne!(
            s.hash_one([1u8, 2, 3, 4, 5, 6]),
            s.hash_one([1u8, 2, 3, 4, 5, 7])
        );
        let mut m: FastMap<u32, u32> = FastMap::default();
        for k in 0..10_000u32 {
            m.insert(k, k * 2);
        }
        for k in 0..10_000u32 {
            assert_eq!(m.get(&k), Some(&(k * 2)));
        }
        assert_eq!(m.get(&10_000), None);
    }

    #[test]
    fn tables_are_keyed_apart() {
        // Two tables hash the same key differently (each draws its own key), so a
        // peer cannot prepare colliding keys for every table at once.
        let a = FastState::default();
        let b = FastState::default();
        assert_ne!(a.hash_one(7u32), b.hash_one(7u32));
    }

    #[test]
    fn sequential_ids_spread_over_the_low_bits() {
        // The table takes its bucket from the low bits: ids 1, 2, 3, ... must not all
        // land in a few buckets.
        let s = FastState::default();
        let mut seen = std::collections::HashSet::new();
        for k in 0..256u32 {
            seen.insert(s.hash_one(k) & 0xff);
        }
        assert!(seen.len() > 128, "{} distinct buckets of 256", seen.len());
    }
}
