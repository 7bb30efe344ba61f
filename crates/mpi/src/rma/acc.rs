//! Accumulates on window memory, element-wise atomic as MPI-3 §11.7.1 asks:
//! concurrent accumulates (Accumulate, Get_accumulate, Fetch_and_op,
//! Compare_and_swap) of one predefined type at one location act as if done one
//! after the other.
//!
//! An element of 1, 2, 4 or 8 bytes at an address aligned to its size is updated
//! with one hardware atomic: `fetch_add` for MPI_SUM on integers, `fetch_and`/
//! `or`/`xor` for the bit ops, `swap` for MPI_REPLACE, a load for MPI_NO_OP and a
//! compare-and-swap loop around the op for everything else (floating point,
//! MIN/MAX, PROD, the logical ops, 8-byte pairs). Other elements (long double,
//! complex, 16-byte pairs, misaligned ones) are updated under the target's
//! accumulate lock ([`Ctrl::with_acc_lock`]). A location is always reached the same
//! way for one type (its alignment and width decide), so the two ways never race
//! each other on the same element.

use super::ctrl::Ctrl;
use crate::datatype::{Basic, Class};
use crate::op::{reduce, BuiltinOp, OpError};
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Whether `op` applies to `basic` (MPI_ERR_OP on the C side if not).
pub fn check(op: BuiltinOp, basic: Basic) -> Result<(), OpError> {
    reduce(op, basic, &[], &mut [])
}

/// Whether Compare_and_swap is defined on `basic` (C and Fortran integers,
/// logicals, the multi-language types, MPI_BYTE).
pub fn cas_allowed(basic: Basic) -> bool {
    facts(basic) & CAS != 0
}

fn cas_class(basic: Basic) -> bool {
    matches!(
        basic.class(),
        Class::CInteger
            | Class::FortranInteger
            | Class::Logical
            | Class::MultiLanguage
            | Class::Byte
    )
}

fn is_integer(basic: Basic) -> bool {
    matches!(
        basic.class(),
        Class::CInteger | Class::FortranInteger | Class::MultiLanguage | Class::Byte
    )
}

/// [`facts`]: bit `op as u32` set when `op` applies to the type
/// ([`crate::op::allowed`]), then these bits, then the size from bit 16.
const INTEGER: u32 = 1 << 14;
const CAS: u32 = 1 << 15;

/// What a one-element accumulate needs to know of a predefined type, computed
/// once for all of them: `Basic::info` builds the type's whole record (name,
/// class, sizes) at each call, some 50 instructions, and a one-element
/// accumulate asked it three times, a quarter of its cost.
fn facts(basic: Basic) -> u32 {
    static FACTS: std::sync::OnceLock<[u32; Basic::ALL.len()]> = std::sync::OnceLock::new();
    FACTS.get_or_init(|| {
        let mut t = [0u32; Basic::ALL.len()];
        for b in Basic::ALL {
            let ops = ALL_OPS
                .iter()
                .filter(|&&op| crate::op::allowed(op, b))
                .fold(0u32, |m, &op| m | 1 << op as u32);
            let int = if is_integer(b) { INTEGER } else { 0 };
            let cas = if cas_class(b) { CAS } else { 0 };
            t[b.index()] = ops | int | cas | (b.size() as u32) << 16;
        }
        t
    })[basic.index()]
}

const ALL_OPS: [BuiltinOp; 14] = {
    use BuiltinOp::*;
    [
        Max, Min, Sum, Prod, Land, Band, Lor, Bor, Lxor, Bxor, Maxloc, Minloc, Replace, NoOp,
    ]
};

/// [`crate::op::allowed`] from the table.
#[inline]
pub fn allowed(op: BuiltinOp, basic: Basic) -> bool {
    facts(basic) & 1 << op as u32 != 0
}

/// `basic.size()` from the table.
#[inline]
pub fn width(basic: Basic) -> usize {
    (facts(basic) >> 16) as usize
}

fn hardware(w: usize, p: *mut u8) -> bool {
    matches!(w, 1 | 2 | 4 | 8) && (p as usize) % w == 0
}

macro_rules! atomic_elem {
    ($name:ident, $a:ty, $t:ty) => {
        /// One element by hardware atomics; returns the old value's bytes.
        ///
        /// # Safety
        /// `p` is aligned and valid for an atomic access of the width.
        unsafe fn $name(
            op: BuiltinOp,
            basic: Basic,
            origin: &[u8],
            p: *mut u8,
            old_out: &mut [u8],
        ) -> Result<(), OpError> {
            // SAFETY: the caller's contract; other processes reach this memory with
            // atomics too.
            let a = unsafe { <$a>::from_ptr(p.cast::<$t>()) };
            let v = <$t>::from_ne_bytes(origin.try_into().expect("element width"));
            let int = facts(basic) & INTEGER != 0;
            let old = match op {
                BuiltinOp::NoOp => a.load(Ordering::Acquire),
                BuiltinOp::Replace => a.swap(v, Ordering::AcqRel),
                BuiltinOp::Sum if int => a.fetch_add(v, Ordering::AcqRel),
                BuiltinOp::Band if int => a.fetch_and(v, Ordering::AcqRel),
                BuiltinOp::Bor if int => a.fetch_or(v, Ordering::AcqRel),
                BuiltinOp::Bxor if int => a.fetch_xor(v, Ordering::AcqRel),
                _ => {
                    let mut old = a.load(Ordering::Acquire);
                    loop {
                        let mut b = old.to_ne_bytes();
                        reduce(op, basic, origin, &mut b)?;
                        match a.compare_exchange_weak(
                            old,
                            <$t>::from_ne_bytes(b),
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        ) {
                            Ok(_) => break old,
                            Err(cur) => old = cur,
                        }
                    }
                }
            };
            old_out.copy_from_slice(&old.to_ne_bytes());
            Ok(())
        }
    };
}
atomic_elem!(elem8, AtomicU8, u8);
atomic_elem!(elem16, AtomicU16, u16);
atomic_elem!(elem32, AtomicU32, u32);
atomic_elem!(elem64, AtomicU64, u64);

/// `target[i] = origin[i] op target[i]` for the packed elements of `origin` (of
/// `basic`), stored contiguously at `target`; the old values go to `result` (same
/// length as `origin`) when given.
///
/// # Safety
/// `target` is valid for `origin.len()` bytes of reads and writes, in memory every
/// process updates through this module only (or under the window's
/// synchronization), and does not overlap `origin` or `result`; `ctrl` is the
/// target's control block.
pub unsafe fn accumulate(
    op: BuiltinOp,
    basic: Basic,
    origin: &[u8],
    target: *mut u8,
    result: Option<&mut [u8]>,
    ctrl: &Ctrl,
) -> Result<(), OpError> {
    let w = validate(op, basic, origin, result.as_deref())?;
    // Several elements replaced or read together are a structure being published
    // or read (a linked list's {rank, displacement} in MPI_BYTEs, MPICH's
    // rma/linked_list tests): MPICH and Open MPI never let a reader see half of one,
    // so neither do we. The per-element atomics stay under the lock, so lock-free
    // single-element accumulates on the same elements remain element-wise atomic
    // beside them.
    let whole = origin.len() > w && matches!(op, BuiltinOp::Replace | BuiltinOp::NoOp);
    if hardware(w, target) && !whole {
        // SAFETY: the caller's contract; aligned (hardware).
        return unsafe { elementwise(op, basic, origin, target, result) };
    }
    // SAFETY: the caller's contract, with the lock held.
    ctrl.with_acc_lock(|| unsafe { accumulate_held(op, basic, origin, target, result) })
}

/// [`accumulate`] of one element (`origin` and `result` one element of `basic`),
/// the op already known to apply to `basic` ([`crate::op::allowed`]): the same
/// path per location as [`accumulate`] takes (a hardware atomic when aligned and
/// 1, 2, 4 or 8 bytes wide, the accumulate lock otherwise), so the two are atomic
/// with respect to each other, without the checks and the loop.
///
/// # Safety
/// As [`accumulate`], for one element.
#[inline]
pub unsafe fn accumulate_one(
    op: BuiltinOp,
    basic: Basic,
    origin: &[u8],
    target: *mut u8,
    result: Option<&mut [u8]>,
    ctrl: &Ctrl,
) -> Result<(), OpError> {
    let w = width(basic);
    if !hardware(w, target) {
        // SAFETY: the caller's contract, with the lock held.
        return ctrl
            .with_acc_lock(|| unsafe { accumulate_held(op, basic, origin, target, result) });
    }
    let mut scratch = [0u8; 8];
    let old = match result {
        Some(r) => r,
        None => &mut scratch[..w],
    };
    // SAFETY: the caller's contract; aligned (hardware).
    unsafe {
        match w {
            1 => elem8(op, basic, origin, target, old),
            2 => elem16(op, basic, origin, target, old),
            4 => elem32(op, basic, origin, target, old),
            _ => elem64(op, basic, origin, target, old),
        }
    }
}

/// As [`accumulate`], for a caller holding the target's accumulate lock
/// ([`Ctrl::with_acc_lock`]) around several calls that must look like one (an
/// accumulate whose elements lie in two mappings).
///
/// # Safety
/// As [`accumulate`], and the target's accumulate lock is held.
pub unsafe fn accumulate_held(
    op: BuiltinOp,
    basic: Basic,
    origin: &[u8],
    target: *mut u8,
    result: Option<&mut [u8]>,
) -> Result<(), OpError> {
    let w = validate(op, basic, origin, result.as_deref())?;
    if hardware(w, target) {
        // SAFETY: the caller's contract; aligned (hardware).
        return unsafe { elementwise(op, basic, origin, target, result) };
    }
    // SAFETY: the caller's range; the lock keeps every other accumulate of this
    // path out while the bytes are read and written.
    let t = unsafe { std::slice::from_raw_parts_mut(target, origin.len()) };
    if let Some(r) = result {
        r.copy_from_slice(t);
    }
    reduce(op, basic, origin, t)
}

/// Checks `op` on `basic` and the lengths; the element width.
fn validate(
    op: BuiltinOp,
    basic: Basic,
    origin: &[u8],
    result: Option<&[u8]>,
) -> Result<usize, OpError> {
    check(op, basic)?;
    let w = basic.size();
    if origin.len() % w != 0 || result.is_some_and(|r| r.len() != origin.len()) {
        return Err(OpError::Length {
            input: origin.len(),
            inout: result.map_or(origin.len(), |r| r.len()),
            size: w,
        });
    }
    Ok(w)
}

/// The elements of `origin` applied one hardware atomic each.
///
/// # Safety
/// As [`accumulate`]; `target` is aligned to the width of `basic`, which is 1, 2, 4
/// or 8 bytes.
unsafe fn elementwise(
    op: BuiltinOp,
    basic: Basic,
    origin: &[u8],
    target: *mut u8,
    mut result: Option<&mut [u8]>,
) -> Result<(), OpError> {
    let w = basic.size();
    let mut old = [0u8; 8];
    for (i, o) in origin.chunks_exact(w).enumerate() {
        let p = target.wrapping_add(i * w);
        // SAFETY: in the caller's range; aligned (target is, and w divides every
        // offset).
        unsafe {
            match w {
                1 => elem8(op, basic, o, p, &mut old[..1]),
                2 => elem16(op, basic, o, p, &mut old[..2]),
                4 => elem32(op, basic, o, p, &mut old[..4]),
                _ => elem64(op, basic, o, p, &mut old[..8]),
            }
        }?;
        if let Some(r) = result.as_deref_mut() {
            r[i * w..(i + 1) * w].copy_from_slice(&old[..w]);
        }
    }
    Ok(())
}

/// MPI_Compare_and_swap on one element of `basic` at `target`: if it equals
/// `compare`, it becomes `origin`; its old value goes to `result`.
///
/// # Safety
/// As for [`accumulate`], for one element.
pub unsafe fn compare_and_swap(
    basic: Basic,
    origin: &[u8],
    compare: &[u8],
    target: *mut u8,
    result: &mut [u8],
    ctrl: &Ctrl,
) -> Result<(), OpError> {
    let w = width(basic);
    if !cas_allowed(basic) {
        return Err(OpError::NotDefined {
            op: BuiltinOp::Replace,
            basic,
        });
    }
    if origin.len() != w || compare.len() != w || result.len() != w {
        return Err(OpError::Length {
            input: origin.len(),
            inout: result.len(),
            size: w,
        });
    }
    macro_rules! cas {
        ($a:ty, $t:ty) => {{
            // SAFETY: aligned (hardware() checked) and valid by the contract.
            let a = unsafe { <$a>::from_ptr(target.cast::<$t>()) };
            let n = <$t>::from_ne_bytes(origin.try_into().expect("width"));
            let c = <$t>::from_ne_bytes(compare.try_into().expect("width"));
            let old = match a.compare_exchange(c, n, Ordering::AcqRel, Ordering::Acquire) {
                Ok(v) | Err(v) => v,
            };
            result.copy_from_slice(&old.to_ne_bytes());
        }};
    }
    if hardware(w, target) {
        match w {
            1 => cas!(AtomicU8, u8),
            2 => cas!(AtomicU16, u16),
            4 => cas!(AtomicU32, u32),
            _ => cas!(AtomicU64, u64),
        }
        return Ok(());
    }
    ctrl.with_acc_lock(|| {
        // SAFETY: as in accumulate.
        let t = unsafe { std::slice::from_raw_parts_mut(target, w) };
        result.copy_from_slice(t);
        if t == compare {
            t.copy_from_slice(origin);
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rma::ctrl;
    use std::sync::Arc;

    struct Shared {
        target: Vec<AtomicU64>,
        ctrl: Vec<AtomicU64>,
    }

    fn zeros(n: usize) -> Vec<AtomicU64> {
        (0..n).map(|_| AtomicU64::new(0)).collect()
    }

    fn word(s: &Shared, i: usize) -> u64 {
        s.target[i].load(Ordering::SeqCst)
    }

    fn shared() -> Arc<Shared> {
        Arc::new(Shared {
            target: zeros(8),
            ctrl: zeros(ctrl::len(4) / 8),
        })
    }

    fn parts(s: &Shared) -> (*mut u8, Ctrl) {
        // SAFETY: the block lives as long as the Arc the callers hold.
        let c = unsafe { Ctrl::new(s.ctrl.as_ptr() as *mut u8, 4) };
        (s.target.as_ptr() as *mut u8, c)
    }

    fn hammer(f: impl Fn(*mut u8, &Ctrl, usize) + Send + Sync + 'static) -> Arc<Shared> {
        let s = shared();
        let f = Arc::new(f);
        let ts: Vec<_> = (0..4)
            .map(|t| {
                let (s, f) = (s.clone(), f.clone());
                std::thread::spawn(move || {
                    let (p, c) = parts(&s);
                    for _ in 0..5000 {
                        f(p, &c, t);
                    }
                })
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        s
    }

    #[test]
    fn the_table_agrees_with_the_op_and_type_rules() {
        for b in Basic::ALL {
            assert_eq!(width(b), b.size(), "{b:?}");
            assert_eq!(cas_allowed(b), cas_class(b), "{b:?}");
            for op in ALL_OPS {
                assert_eq!(allowed(op, b), crate::op::allowed(op, b), "{op:?} {b:?}");
            }
        }
        // Spot checks of the rules themselves, as the standard has them.
        assert!(allowed(BuiltinOp::Sum, Basic::LongLong));
        assert!(!allowed(BuiltinOp::Sum, Basic::Byte));
        assert!(allowed(BuiltinOp::Maxloc, Basic::DoubleInt));
        assert!(!allowed(BuiltinOp::Band, Basic::Double));
        assert!(allowed(BuiltinOp::Replace, Basic::LongDouble));
        assert!(cas_allowed(Basic::Int) && !cas_allowed(Basic::Float));
    }

    #[test]
    fn a_structure_replaced_in_bytes_is_never_read_half_written() {
        // Threads 0 and 1 publish 16-byte structures of one repeated byte; 2 and 3
        // read them back with MPI_NO_OP: never a mix of two.
        let _ = hammer(|p, c, t| {
            let mut seen = [0u8; 16];
            // SAFETY: the shared test buffer, valid while the threads run.
            unsafe {
                if t < 2 {
                    let v = [t as u8 + 1; 16];
                    accumulate(BuiltinOp::Replace, Basic::Byte, &v, p.add(3), None, c).unwrap();
                } else {
                    let zero = [0u8; 16];
                    let r = Some(&mut seen[..]);
                    accumulate(BuiltinOp::NoOp, Basic::Byte, &zero, p.add(3), r, c).unwrap();
                    assert!(seen.iter().all(|&b| b == seen[0]), "torn: {seen:?}");
                }
            }
        });
    }

    #[test]
    fn concurrent_sums_are_exact_on_every_path() {
        // i64 through fetch_add, f64 through the CAS loop, long double under the lock.
        // SAFETY: the shared test buffer, valid while the threads run.
        let s = hammer(|p, c, _| unsafe {
            accumulate(
                BuiltinOp::Sum,
                Basic::LongLong,
                &1i64.to_ne_bytes(),
                p,
                None,
                c,
            )
            .unwrap();
            accumulate(
                BuiltinOp::Sum,
                Basic::Double,
                &0.5f64.to_ne_bytes(),
                p.add(8),
                None,
                c,
            )
            .unwrap();
            // A misaligned int goes through the accumulate lock.
            accumulate(
                BuiltinOp::Sum,
                Basic::Int,
                &1i32.to_ne_bytes(),
                p.add(17),
                None,
                c,
            )
            .unwrap();
        });
        assert_eq!(word(&s, 0) as i64, 20000);
        assert_eq!(f64::from_bits(word(&s, 1)), 10000.0);
        let bytes: Vec<u8> = (0..8).flat_map(|i| word(&s, i).to_ne_bytes()).collect();
        assert_eq!(i32::from_ne_bytes(bytes[17..21].try_into().unwrap()), 20000);
    }

    #[test]
    fn fetch_and_op_hands_out_every_ticket_once() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let s2 = seen.clone();
        hammer(move |p, c, _| {
            let mut old = [0u8; 4];
            // SAFETY: the shared test buffer.
            unsafe {
                accumulate(
                    BuiltinOp::Sum,
                    Basic::Int,
                    &1i32.to_ne_bytes(),
                    p,
                    Some(&mut old),
                    c,
                )
            }
            .unwrap();
            s2.lock().unwrap().push(i32::from_ne_bytes(old));
        });
        let mut v = seen.lock().unwrap().clone();
        v.sort_unstable();
        assert_eq!(v, (0..20000).collect::<Vec<_>>());
    }

    #[test]
    fn cas_lock_and_max() {
        // SAFETY: the shared test buffer, valid while the threads run.
        let s = hammer(|p, c, t| unsafe {
            // A spin lock built on Compare_and_swap guarding a plain increment.
            let mut old = [0u8; 8];
            loop {
                compare_and_swap(
                    Basic::Int64,
                    &1u64.to_ne_bytes(),
                    &0u64.to_ne_bytes(),
                    p,
                    &mut old,
                    c,
                )
                .unwrap();
                if old == [0; 8] {
                    break;
                }
            }
            let q = p.add(8).cast::<u64>();
            q.write_volatile(q.read_volatile() + 1);
            accumulate(
                BuiltinOp::Replace,
                Basic::Int64,
                &0u64.to_ne_bytes(),
                p,
                None,
                c,
            )
            .unwrap();
            accumulate(
                BuiltinOp::Max,
                Basic::Int,
                &(t as i32).to_ne_bytes(),
                p.add(16),
                None,
                c,
            )
            .unwrap();
        });
        assert_eq!(word(&s, 1), 20000);
        assert_eq!(word(&s, 2) as u32, 3);
        assert!(check(BuiltinOp::Band, Basic::Double).is_err());
        assert!(!cas_allowed(Basic::Double));
    }
}
