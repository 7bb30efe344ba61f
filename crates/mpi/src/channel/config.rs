//! The channel's tunables (seed 004 §3.1: "the number of postboxes in a queue, the size
//! of the buffer pool, and the block sizes are all tunable parameters"), read from
//! `MYRIX_MPI_*` and bounded: an absurd value is refused with a [`ConfigError`] that
//! names the variable, never clamped silently.
//!
//! | variable | field | default | bounds |
//! |---|---|---|---|
//! | `MYRIX_MPI_QUEUE` | postboxes per queue | 64 | 4 ..= 4096 |
//! | `MYRIX_MPI_POOL` | pool bytes per channel | 262144 | 2 large blocks ..= 256 MiB, a multiple of the small block |
//! | `MYRIX_MPI_SMALL_BLOCK` | small block | 2048 | 64 ..= 1 MiB, a power of two |
//! | `MYRIX_MPI_LARGE_BLOCK` | large block | 4096 | a multiple of the small block, ..= 16 MiB |
//! | `MYRIX_MPI_SHORT` | largest message inline in postboxes | 40 (one postbox) | ..= 56 × (queue − 1) |
//! | `MYRIX_MPI_EAGER` | largest message sent without rendezvous | 65536 | short ..= 64 MiB |
//!
//! The short limit comes from `examples/channel_pingpong.rs`: on shm the "barrier"
//! of the pool protocol is a release fence (free on x86), so the seed's crossover of
//! "a few thousand bytes" (a network barrier is a round trip) does not hold. Measured
//! (one thread taking turns, software cost per message, median of 7): 96 bytes
//! inline 0.10 µs vs pool 0.07; 1024 bytes inline 0.37 vs pool 0.08; across two
//! processes on a loaded 2-core machine 1024 bytes inline 5.5 µs vs pool 2.7. So only
//! what fits one postbox goes inline. A network window should raise it.
//!
//! Every value here is the *sender's*: the sender proposes its geometry in the
//! connection request and the receiver builds the area to it (after checking the same
//! bounds), so two ranks with different settings still talk.

use thiserror::Error;

/// Bytes of data a first postbox carries inline.
pub const FIRST_INLINE: usize = super::layout::postbox::FIRST_PAYLOAD_LEN;
/// Bytes of data a continuation postbox carries inline.
pub const CONT_INLINE: usize = super::layout::postbox::CONT_PAYLOAD_LEN;

pub const QUEUE_MIN: u32 = 4;
pub const QUEUE_MAX: u32 = 4096;
pub const SMALL_MIN: u32 = 64;
pub const SMALL_MAX: u32 = 1 << 20;
pub const LARGE_MAX: u32 = 16 << 20;
pub const POOL_MAX: usize = 256 << 20;
pub const EAGER_MAX: usize = 64 << 20;

/// A refused setting.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{var}={value:?}: {why}")]
pub struct ConfigError {
    pub var: &'static str,
    pub value: String,
    pub why: String,
}

/// The channel's geometry and protocol crossovers. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelConfig {
    /// Postboxes per queue (one queue per connection).
    pub queue: u32,
    /// Bytes of pool per connection.
    pub pool: usize,
    pub small_block: u32,
    pub large_block: u32,
    /// Messages up to this many bytes travel inline in postboxes.
    pub short: usize,
    /// Messages up to this many bytes are sent without waiting for the receiver.
    pub eager: usize,
}

impl Default for ChannelConfig {
    fn default() -> Self {
        ChannelConfig {
            queue: 64,
            pool: 256 << 10,
            small_block: 2048,
            large_block: 4096,
            short: 40,
            eager: 64 << 10,
        }
    }
}

impl ChannelConfig {
    /// The defaults, overridden by the `MYRIX_MPI_*` variables that are set.
    pub fn from_env() -> Result<ChannelConfig, ConfigError> {
        Self::from_lookup(&|k| std::env::var(k).ok())
    }

    /// As [`from_env`](Self::from_env), reading `env`.
    pub fn from_lookup(env: &dyn Fn(&str) -> Option<String>) -> Result<ChannelConfig, ConfigError> {
        let mut c = ChannelConfig::default();
        fn num(
            env: &dyn Fn(&str) -> Option<String>,
            var: &'static str,
        ) -> Result<Option<u64>, ConfigError> {
            match env(var) {
                None => Ok(None),
                Some(v) => parse_size(&v).map(Some).ok_or_else(|| ConfigError {
                    var,
                    value: v.clone(),
                    why: "not a number of bytes (digits, optional k/m suffix)".into(),
                }),
            }
        }
        let big = |var: &'static str, v: u64| ConfigError {
            var,
            value: v.to_string(),
            why: "too large".into(),
        };
        if let Some(v) = num(env, "MYRIX_MPI_QUEUE")? {
            c.queue = u32::try_from(v).map_err(|_| big("MYRIX_MPI_QUEUE", v))?;
        }
        if let Some(v) = num(env, "MYRIX_MPI_POOL")? {
            c.pool = usize::try_from(v).map_err(|_| big("MYRIX_MPI_POOL", v))?;
        }
        if let Some(v) = num(env, "MYRIX_MPI_SMALL_BLOCK")? {
            c.small_block = u32::try_from(v).map_err(|_| big("MYRIX_MPI_SMALL_BLOCK", v))?;
        }
        if let Some(v) = num(env, "MYRIX_MPI_LARGE_BLOCK")? {
            c.large_block = u32::try_from(v).map_err(|_| big("MYRIX_MPI_LARGE_BLOCK", v))?;
        }
        if let Some(v) = num(env, "MYRIX_MPI_SHORT")? {
            c.short = usize::try_from(v).map_err(|_| big("MYRIX_MPI_SHORT", v))?;
        }
        if let Some(v) = num(env, "MYRIX_MPI_EAGER")? {
            c.eager = usize::try_from(v).map_err(|_| big("MYRIX_MPI_EAGER", v))?;
        }
        c.validate()?;
        Ok(c)
    }

    /// Checks every bound of the table in the module docs.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad =
            |var: &'static str, value: String, why: String| Err(ConfigError { var, value, why });
        if !(QUEUE_MIN..=QUEUE_MAX).contains(&self.queue) {
            return bad(
                "MYRIX_MPI_QUEUE",
                self.queue.to_string(),
                format!("postboxes per queue must be {QUEUE_MIN}..={QUEUE_MAX}"),
            );
        }
        if !(SMALL_MIN..=SMALL_MAX).contains(&self.small_block)
            || !self.small_block.is_power_of_two()
        {
            return bad(
                "MYRIX_MPI_SMALL_BLOCK",
                self.small_block.to_string(),
                format!("must be a power of two in {SMALL_MIN}..={SMALL_MAX}"),
            );
        }
        if self.large_block < self.small_block
            || self.large_block % self.small_block != 0
            || self.large_block > LARGE_MAX
        {
            return bad(
                "MYRIX_MPI_LARGE_BLOCK",
                self.large_block.to_string(),
                format!(
                    "must be a multiple of the small block ({}) and at most {LARGE_MAX}",
                    self.small_block
                ),
            );
        }
        let min_pool = 2 * self.large_block as usize;
        if self.pool < min_pool
            || self.pool > POOL_MAX
            || self.pool % self.small_block as usize != 0
        {
            return bad(
                "MYRIX_MPI_POOL",
                self.pool.to_string(),
                format!(
                    "must be a multiple of the small block ({}) in {min_pool}..={POOL_MAX}",
                    self.small_block
                ),
            );
        }
        let short_max = CONT_INLINE * (self.queue as usize - 1);
        if self.short > short_max {
            return bad(
                "MYRIX_MPI_SHORT",
                self.short.to_string(),
                format!("at most {short_max} (56 bytes per postbox, queue - 1 postboxes)"),
            );
        }
        if self.eager < self.short || self.eager > EAGER_MAX {
            return bad(
                "MYRIX_MPI_EAGER",
                self.eager.to_string(),
                format!(
                    "must be in {}..={EAGER_MAX} (at least the short limit)",
                    self.short
                ),
            );
        }
        Ok(())
    }

    /// Pool size in small blocks.
    pub fn pool_units(&self) -> u32 {
        (self.pool / self.small_block as usize) as u32
    }
}

/// `123`, `64k`, `2m` (binary multiples).
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, mul) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 1u64 << 10),
        b'm' | b'M' => (&s[..s.len() - 1], 1 << 20),
        _ => (s, 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(mul)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> Result<ChannelConfig, ConfigError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ChannelConfig::from_lookup(&move |k| {
            pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn defaults_are_valid() {
        assert_eq!(with(&[]).unwrap(), ChannelConfig::default());
    }

    #[test]
    fn values_parse_with_suffixes() {
        let c = with(&[("MYRIX_MPI_POOL", "1m"), ("MYRIX_MPI_EAGER", "128k")]).unwrap();
        assert_eq!((c.pool, c.eager), (1 << 20, 128 << 10));
    }

    #[test]
    fn absurd_values_are_refused_by_name() {
        for (k, v) in [
            ("MYRIX_MPI_QUEUE", "0"),
            ("MYRIX_MPI_QUEUE", "1000000"),
            ("MYRIX_MPI_QUEUE", "lots"),
            ("MYRIX_MPI_POOL", "100"),
            ("MYRIX_MPI_POOL", "99999999999999999999"),
            ("MYRIX_MPI_SMALL_BLOCK", "3000"),
            ("MYRIX_MPI_LARGE_BLOCK", "3000"),
            ("MYRIX_MPI_SHORT", "1000000"),
            ("MYRIX_MPI_EAGER", "10"),
            ("MYRIX_MPI_EAGER", "1g"),
        ] {
            let e = with(&[(k, v)]).unwrap_err();
            assert_eq!(e.var, k, "{k}={v}: {e}");
        }
    }
}
