//! Traffic patterns, chosen by name: who each message goes to.

use myrix_fabric::named::Named;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Traffic {
    /// Uniformly random among the other hosts.
    Uniform,
    /// Host `i` sends to the host whose index is `i`'s bits reversed (over the bits
    /// needed to number all hosts; indices beyond the last host wrap).
    BitReversal,
    /// A fraction of messages go to host 0, the rest uniformly.
    Hotspot { fraction: f64 },
    /// Uniformly among the other hosts on the same switch (none: uniform).
    Local,
}

impl Named for Traffic {
    const WHAT: &'static str = "traffic";
    fn table() -> &'static [(&'static str, Traffic)] {
        &[
            ("uniform", Traffic::Uniform),
            ("bit-reversal", Traffic::BitReversal),
            ("hotspot", Traffic::Hotspot { fraction: 0.1 }),
            ("local", Traffic::Local),
        ]
    }
}

impl Traffic {
    /// The pattern's name (a hotspot of any fraction is `hotspot`).
    pub fn name(&self) -> &'static str {
        match self {
            Traffic::Uniform => "uniform",
            Traffic::BitReversal => "bit-reversal",
            Traffic::Hotspot { .. } => "hotspot",
            Traffic::Local => "local",
        }
    }

    /// Destination for a message from `src` among `n` hosts; `same_switch` lists the
    /// hosts sharing `src`'s switch.
    pub fn destination(&self, src: u32, n: u32, same_switch: &[u32], rng: &mut ChaCha8Rng) -> u32 {
        let uniform = |rng: &mut ChaCha8Rng| {
            let d = rng.gen_range(0..n - 1);
            if d >= src {
                d + 1
            } else {
                d
            }
        };
        match *self {
            Traffic::Uniform => uniform(rng),
            Traffic::BitReversal => {
                let bits = 32 - (n - 1).leading_zeros();
                let r = if bits == 0 {
                    0
                } else {
                    src.reverse_bits() >> (32 - bits)
                };
                let d = r % n;
                if d == src {
                    (src + 1) % n
                } else {
                    d
                }
            }
            Traffic::Hotspot { fraction } => {
                if src != 0 && rng.gen_bool(fraction) {
                    0
                } else {
                    uniform(rng)
                }
            }
            Traffic::Local => {
                let k = same_switch.len();
                match same_switch.iter().position(|&h| h == src) {
                    Some(pos) if k > 1 => {
                        let i = rng.gen_range(0..k - 1);
                        same_switch[if i >= pos { i + 1 } else { i }]
                    }
                    _ => uniform(rng),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng() -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(7)
    }

    #[test]
    fn names_parse() {
        for n in Traffic::names() {
            assert_eq!(Traffic::from_name(n).unwrap().name(), n);
        }
        assert!(Traffic::from_name("tornado").is_err());
    }

    #[test]
    fn uniform_never_picks_the_source_and_covers_the_rest() {
        let mut r = rng();
        let mut seen = [0u32; 8];
        for _ in 0..8000 {
            let d = Traffic::Uniform.destination(3, 8, &[], &mut r);
            assert_ne!(d, 3);
            seen[d as usize] += 1;
        }
        assert!(
            seen.iter()
                .enumerate()
                .all(|(i, &c)| i == 3 || (900..1400).contains(&c)),
            "{seen:?}"
        );
    }

    #[test]
    fn bit_reversal_is_the_bit_reversal_permutation_on_powers_of_two() {
        let mut r = rng();
        let d: Vec<u32> = (0..16)
            .map(|s| Traffic::BitReversal.destination(s, 16, &[], &mut r))
            .collect();
        // 0001 -> 1000, 0010 -> 0100, ...; the palindromes 0, 6, 9, 15 (and the like) go
        // to their neighbour instead of to themselves.
        assert_eq!(d[1], 8);
        assert_eq!(d[2], 4);
        assert_eq!(d[3], 12);
        assert!((0..16).all(|s| d[s as usize] != s));
    }

    #[test]
    fn hotspot_sends_its_share_to_host_0() {
        let mut r = rng();
        let t = Traffic::Hotspot { fraction: 0.1 };
        let hits = (0..20_000)
            .filter(|_| t.destination(5, 64, &[], &mut r) == 0)
            .count();
        // 10 % plus the uniform share of the rest (0.9 / 63).
        let want = 20_000.0 * (0.1 + 0.9 / 63.0);
        assert!((hits as f64 - want).abs() < 0.1 * want, "{hits}");
    }

    #[test]
    fn local_stays_on_the_switch() {
        let mut r = rng();
        for _ in 0..100 {
            let d = Traffic::Local.destination(5, 64, &[4, 5, 6, 7], &mut r);
            assert!([4, 6, 7].contains(&d));
        }
        // Alone on its switch: uniform.
        assert_ne!(Traffic::Local.destination(5, 64, &[5], &mut r), 5);
    }
}
