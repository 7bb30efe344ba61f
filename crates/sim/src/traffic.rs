//! Traffic patterns, chosen by name: who each message goes to.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The pattern names, for help texts and errors.
pub const PATTERNS: [&str; 4] = ["uniform", "bit-reversal", "hotspot", "local"];

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

impl Traffic {
    pub fn parse(s: &str) -> Option<Traffic> {
        match s {
            "uniform" => Some(Traffic::Uniform),
            "bit-reversal" => Some(Traffic::BitReversal),
            "hotspot" => Some(Traffic::Hotspot { fraction: 0.1 }),
            "local" => Some(Traffic::Local),
            _ => None,
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
