//! Large scratch buffers of finished schedules, kept for the next ones: a
//! nonblocking reduction of 1 MiB takes one or two 1 MiB scratch buffers per call,
//! and fresh ones came from the kernel each time (glibc maps allocations that
//! large), so every call paid their page faults and the unmapping — a third of a
//! 2-rank MPI_Ireduce's time in `perf` (session 29). A buffer taken from here is
//! zeroed again, as [`super::Builder::scratch`] promises.
//!
//! Bounded ([`KEEP`] buffers, [`KEEP_BYTES`] in all); buffers under [`MIN`] bytes
//! are left to the allocator (it recycles small blocks without a fault).

use std::sync::Mutex;

/// Smallest buffer worth keeping.
pub const MIN: usize = 64 * 1024;
/// Most buffers kept.
pub const KEEP: usize = 8;
/// Most bytes kept in all.
pub const KEEP_BYTES: usize = 32 << 20;

static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// `len` zeroed bytes, reusing a kept buffer when one is large enough.
pub fn take(len: usize) -> Vec<u8> {
    if len >= MIN {
        let mut p = POOL.lock().unwrap_or_else(|e| e.into_inner());
        // The smallest kept buffer that holds `len`.
        let best = (0..p.len())
            .filter(|&i| p[i].capacity() >= len)
            .min_by_key(|&i| p[i].capacity());
        if let Some(i) = best {
            let mut v = p.swap_remove(i);
            drop(p);
            v.clear();
            v.resize(len, 0);
            return v;
        }
    }
    vec![0u8; len]
}

/// Keeps `v` for a later [`take`] if it is large and there is room; else frees it.
pub fn give(v: Vec<u8>) {
    if v.capacity() < MIN || v.capacity() > KEEP_BYTES {
        return;
    }
    let mut p = POOL.lock().unwrap_or_else(|e| e.into_inner());
    let kept: usize = p.iter().map(Vec::capacity).sum();
    if p.len() < KEEP && kept + v.capacity() <= KEEP_BYTES {
        if p.capacity() == 0 {
            p.reserve_exact(KEEP);
        }
        p.push(v);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_kept_buffer_comes_back_zeroed_and_small_ones_are_not_kept() {
        let mut v = super::take(super::MIN * 2);
        assert_eq!(v.len(), super::MIN * 2);
        v.fill(7);
        let at = v.as_ptr();
        super::give(v);
        // Another test may take it meanwhile (the pool is process-wide): only a
        // buffer that is this one must be zeroed, and every buffer must be.
        let w = super::take(super::MIN + 1);
        assert_eq!(w.len(), super::MIN + 1);
        assert!(w.iter().all(|&b| b == 0), "a reused buffer is zeroed");
        let reused = w.as_ptr() == at;
        super::give(w);
        let small = super::take(16);
        assert_eq!(small, vec![0u8; 16]);
        // Reuse is the point of the pool; with tests running beside this one it can
        // miss, so only report it.
        eprintln!("pool reused the buffer: {reused}");
    }
}
