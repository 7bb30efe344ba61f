//! Heap memory standing in for a shared segment: ranks as threads of one process
//! share one zeroed allocation (tests, and the sans-OS use of [`super::ShmColl`]).

use super::SharedMem;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// A zeroed, 8-aligned allocation shared by every rank (thread) holding a clone.
#[derive(Clone)]
pub struct HeapMem {
    words: Arc<[AtomicU64]>,
}

impl HeapMem {
    /// At least `len` zeroed bytes.
    pub fn new(len: usize) -> HeapMem {
        HeapMem {
            words: (0..len.div_ceil(8)).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl SharedMem for HeapMem {
    fn ptr(&self) -> *mut u8 {
        // Interior mutability: the words are atomics, written through this pointer
        // by the protocol of `ShmColl` (plain copies only between its flag stores).
        self.words.as_ptr().cast::<u8>().cast_mut()
    }
    fn len(&self) -> usize {
        self.words.len() * 8
    }
}
