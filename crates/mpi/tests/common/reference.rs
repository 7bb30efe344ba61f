//! What the collective tests' serial references share (`coll`, `coll_shm`,
//! `coll_shm_nb`): one deterministic generator, so every rank draws the same stream
//! from a seed, and the non-commutative reduction that shows rank order.

/// splitmix64: a small deterministic generator (the same stream on every rank).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// 2x2 u32 matrices: inout = input × inout (not commutative: a wrong rank order
/// gives another product).
pub fn matmul(input: &[u8], inout: &mut [u8]) {
    for (a, b) in input.chunks_exact(16).zip(inout.chunks_exact_mut(16)) {
        let m = |s: &[u8], k: usize| u32::from_le_bytes(s[4 * k..4 * k + 4].try_into().unwrap());
        let (a0, a1, a2, a3) = (m(a, 0), m(a, 1), m(a, 2), m(a, 3));
        let (b0, b1, b2, b3) = (m(b, 0), m(b, 1), m(b, 2), m(b, 3));
        let c = [
            a0.wrapping_mul(b0).wrapping_add(a1.wrapping_mul(b2)),
            a0.wrapping_mul(b1).wrapping_add(a1.wrapping_mul(b3)),
            a2.wrapping_mul(b0).wrapping_add(a3.wrapping_mul(b2)),
            a2.wrapping_mul(b1).wrapping_add(a3.wrapping_mul(b3)),
        ];
        for (k, v) in c.iter().enumerate() {
            b[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
}
