//! The shm controller in one process: every refusal, publish/unpublish/republish/rebind,
//! barriers, mappings, signals and the guard pages.

use std::time::{Duration, Instant};

use myrix_rsm::{
    AccessEntry, BarrierMode, BarrierType, Controller, ExportFlags, IoVec, IoVecMut, NodeId, Perm,
    RsmError, SegmentId, SignalFlags,
};

const PAGE: usize = 4096;

fn shm() -> Controller {
    Controller::get("shm").unwrap()
}

fn published(len: usize) -> (Controller, myrix_rsm::Export, SegmentId) {
    let c = shm();
    let e = c.export_create(len, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    (c, e, id)
}

fn read_export(e: &myrix_rsm::Export, off: usize, n: usize) -> Vec<u8> {
    // The exporter's own memory, read as the exporting program would.
    let mut v = vec![0u8; n];
    for (i, b) in v.iter_mut().enumerate() {
        // SAFETY (test): in bounds of the export, which is alive.
        *b = unsafe { std::ptr::read_volatile(e.as_ptr().add(off + i)) };
    }
    v
}

#[test]
fn controllers_by_name() {
    for name in ["udp", "eth", "sim", "nope", ""] {
        assert_eq!(Controller::get(name).unwrap_err(), RsmError::CtlrNotPresent);
    }
    let c = Controller::get("loopback").unwrap();
    let a = c.attr();
    assert_eq!((a.name.as_str(), a.kind), ("loopback", "shm"));
    assert!(a.map_supported && a.page_size == PAGE);
    assert_eq!(c.topology(), vec![c.local_node()]);
}

#[test]
fn bad_creates_are_refused() {
    let c = shm();
    let f = ExportFlags::default();
    for len in [0, 100, PAGE + 1, 1 << 40] {
        assert_eq!(
            c.export_create(len, f).unwrap_err(),
            RsmError::BadLength,
            "{len}"
        );
    }
    assert_eq!(ExportFlags::from_bits(0x08), Err(RsmError::BadConf));
    assert_eq!(ExportFlags::from_bits(0x07).unwrap().bits(), 7);
    let buf = c.export_create(2 * PAGE, f).unwrap();
    // SAFETY: refused before any use of the memory.
    unsafe {
        assert_eq!(
            c.export_create_at(std::ptr::null_mut(), PAGE, f)
                .unwrap_err(),
            RsmError::BadAddr
        );
        assert_eq!(
            c.export_create_at(buf.as_ptr().add(8), PAGE, f)
                .unwrap_err(),
            RsmError::BadMemAlignment
        );
        assert_eq!(
            c.export_create_at(buf.as_ptr(), PAGE + 8, f).unwrap_err(),
            RsmError::BadLength
        );
        // The guard page after the buffer is not readable-writable memory.
        assert_eq!(
            c.export_create_at(buf.as_ptr().add(2 * PAGE), PAGE, f)
                .unwrap_err(),
            RsmError::BadAddr
        );
    }
}

#[test]
fn publish_refusals() {
    let c = shm();
    let e = c.export_create(PAGE, ExportFlags::default()).unwrap();
    assert_eq!(e.unpublish(), Err(RsmError::SegNotPublished));
    assert_eq!(e.republish(&[]), Err(RsmError::SegNotPublished));
    assert_eq!(
        e.publish(Some(SegmentId(5)), &[]),
        Err(RsmError::ReservedSegid)
    );
    let dup = [
        AccessEntry {
            node: NodeId(0),
            perm: Perm::RDWR,
        },
        AccessEntry {
            node: NodeId(0),
            perm: Perm::READ,
        },
    ];
    assert_eq!(e.publish(None, &dup), Err(RsmError::BadAcl));
    assert_eq!(e.set_open_mode(Perm(0o1000)), Err(RsmError::BadPerms));
    let id = e.publish(None, &[]).unwrap();
    assert!(id.0 >= SegmentId::USER_BASE);
    assert_eq!(e.id(), Some(id));
    assert_eq!(e.publish(None, &[]), Err(RsmError::SegAlreadyPublished));
    let other = c.export_create(PAGE, ExportFlags::default()).unwrap();
    assert_eq!(other.publish(Some(id), &[]), Err(RsmError::SegidInUse));
    e.unpublish().unwrap();
    assert_eq!(e.id(), None);
    // The id is free again, and the first export can publish again.
    assert_eq!(other.publish(Some(id), &[]), Ok(id));
    other.destroy().unwrap();
    assert!(e.publish(None, &[]).is_ok());
}

#[test]
fn connect_refusals() {
    let c = shm();
    let me = c.local_node();
    let (_c, e, id) = published(PAGE);
    let free = SegmentId(id.0 ^ 0x5a5a_5a5a | SegmentId::USER_BASE);
    assert_eq!(
        c.import_connect(me, free, Perm::RDWR).unwrap_err(),
        RsmError::SegNotPublished
    );
    assert_eq!(
        c.import_connect(NodeId(me.0 + 1), id, Perm::RDWR)
            .unwrap_err(),
        RsmError::RemoteNodeUnreachable
    );
    assert_eq!(
        c.import_connect(me, id, Perm(0)).unwrap_err(),
        RsmError::BadPerms
    );
    assert_eq!(
        c.import_connect(me, id, Perm(0o040)).unwrap_err(),
        RsmError::BadPerms
    );
    // Published to another node only.
    e.republish(&[AccessEntry {
        node: NodeId(me.0 + 7),
        perm: Perm::RDWR,
    }])
    .unwrap();
    assert_eq!(
        c.import_connect(me, id, Perm::READ).unwrap_err(),
        RsmError::SegNotPublishedToNode
    );
    // Read-only to us.
    e.republish(&[AccessEntry {
        node: me,
        perm: Perm(0o444),
    }])
    .unwrap();
    assert_eq!(
        c.import_connect(me, id, Perm::RDWR).unwrap_err(),
        RsmError::PermDenied
    );
    let ro = c.import_connect(me, id, Perm::READ).unwrap();
    assert_eq!(ro.put(0, &[1]), Err(RsmError::PermDenied));
    assert_eq!(ro.put_scalars(0, &[1u32]), Err(RsmError::PermDenied));
    assert_eq!(
        ro.putv(&[IoVec {
            offset: 0,
            local: &[1]
        }]),
        Err(RsmError::PermDenied)
    );
    let mut b = [0u8; 4];
    assert_eq!(ro.get(0, &mut b), Ok(()));
    // Republish applies to new connections only: the old one still reads.
    e.republish(&[]).unwrap();
    let rw = c.import_connect(me, id, Perm::RDWR).unwrap();
    rw.put(0, &[9]).unwrap();
    ro.get(0, &mut b).unwrap();
    assert_eq!(b[0], 9);
}

#[test]
fn bounds_and_alignment() {
    let (c, e, id) = published(2 * PAGE);
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    let len = imp.len();
    let mut out = [0u8; 16];
    assert_eq!(imp.put(len + 1, &[1]), Err(RsmError::BadOffset));
    assert_eq!(imp.put(len, &[1]), Err(RsmError::BadOffset));
    assert_eq!(imp.put(len - 1, &[1, 2]), Err(RsmError::BadLength));
    assert_eq!(imp.put(usize::MAX, &[1]), Err(RsmError::BadOffset));
    assert_eq!(imp.get(len - 8, &mut out), Err(RsmError::BadLength));
    assert_eq!(imp.get(usize::MAX - 3, &mut out), Err(RsmError::BadOffset));
    assert_eq!(imp.put(len, &[]), Ok(()));
    assert_eq!(imp.put_scalars(3, &[1u32]), Err(RsmError::MisalignedOffset));
    assert_eq!(imp.put_scalars(2, &[1u64]), Err(RsmError::MisalignedOffset));
    assert_eq!(imp.put_scalars(1, &[1u16]), Err(RsmError::MisalignedOffset));
    assert_eq!(
        imp.put_scalars(len - 8, &[1u64, 2]),
        Err(RsmError::BadLength)
    );
    let mut s = [0u64; 2];
    assert_eq!(imp.get_scalars(len - 8, &mut s), Err(RsmError::BadLength));
    assert_eq!(imp.get_scalars(4, &mut s), Err(RsmError::MisalignedOffset));
    assert_eq!(imp.putv(&[]), Err(RsmError::BadSgio));
    let many: Vec<IoVec> = (0..17)
        .map(|i| IoVec {
            offset: i,
            local: &[1],
        })
        .collect();
    assert_eq!(imp.putv(&many), Err(RsmError::BadSgio));
    // One bad entry: nothing of the list is written.
    let v = [
        IoVec {
            offset: 0,
            local: &[7; 8],
        },
        IoVec {
            offset: len - 4,
            local: &[7; 8],
        },
    ];
    assert_eq!(imp.putv(&v), Err(RsmError::BadLength));
    assert_eq!(read_export(&e, 0, 8), vec![0; 8]);
    // And what is in bounds works, scalars included.
    imp.put_scalars(8, &[0x1122_3344_5566_7788u64, 9]).unwrap();
    imp.put_scalars(6, &[0xabcdu16]).unwrap();
    let mut w = [0u32; 2];
    imp.get_scalars(8, &mut w).unwrap();
    assert_eq!(w, [0x5566_7788, 0x1122_3344]);
    let v = [
        IoVec {
            offset: 100,
            local: b"abc",
        },
        IoVec {
            offset: len - 3,
            local: b"xyz",
        },
    ];
    imp.putv(&v).unwrap();
    let (mut a, mut z) = ([0u8; 3], [0u8; 3]);
    let mut g = [
        IoVecMut {
            offset: 100,
            local: &mut a,
        },
        IoVecMut {
            offset: len - 3,
            local: &mut z,
        },
    ];
    imp.getv(&mut g).unwrap();
    assert_eq!((&a, &z), (b"abc", b"xyz"));
    assert_eq!(read_export(&e, 6, 2), vec![0xcd, 0xab]);
}

#[test]
fn guard_pages_stay_untouched() {
    let c = shm();
    // Caller memory: three pages, the middle one exported; the neighbours hold a pattern.
    let layout = std::alloc::Layout::from_size_align(3 * PAGE, PAGE).unwrap();
    // SAFETY (test): a fresh allocation, freed at the end after the export is gone.
    let base = unsafe { std::alloc::alloc(layout) };
    unsafe { std::ptr::write_bytes(base, 0xee, 3 * PAGE) };
    let mid = unsafe { base.add(PAGE) };
    let e = unsafe {
        c.export_create_at(mid, PAGE, ExportFlags::default())
            .unwrap()
    };
    let id = e.publish(None, &[]).unwrap();
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    imp.put(0, &[1u8; PAGE]).unwrap();
    for (off, n) in [
        (PAGE, 1),
        (PAGE - 1, 2),
        (usize::MAX, 1),
        (0, PAGE + 1),
        (PAGE - 8, 64),
    ] {
        assert!(imp.put(off, &vec![0x55; n]).is_err());
        assert!(
            imp.put_scalars(off & !7, &vec![0x55u64; n]).is_err() || n * 8 + (off & !7) <= PAGE
        );
    }
    drop(imp);
    e.destroy().unwrap();
    let all = unsafe { std::slice::from_raw_parts(base, 3 * PAGE) };
    assert!(all[..PAGE].iter().all(|&b| b == 0xee));
    assert!(
        all[PAGE..2 * PAGE].iter().all(|&b| b == 1),
        "caller memory keeps its contents"
    );
    assert!(all[2 * PAGE..].iter().all(|&b| b == 0xee));
    unsafe { std::alloc::dealloc(base, layout) };

    // Library memory has inaccessible guard pages on both sides.
    let e = c.export_create(PAGE, ExportFlags::default()).unwrap();
    let start = e.as_ptr() as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let prot = |addr: usize| {
        maps.lines()
            .find_map(|l| {
                let (range, rest) = l.split_once(' ')?;
                let (a, b) = range.split_once('-')?;
                let (a, b) = (
                    usize::from_str_radix(a, 16).ok()?,
                    usize::from_str_radix(b, 16).ok()?,
                );
                (a <= addr && addr < b).then(|| rest[..4].to_string())
            })
            .unwrap()
    };
    assert_eq!(prot(start - 1), "---p");
    assert_eq!(prot(start + PAGE), "---p");
    assert!(prot(start).starts_with("rw"));
}

#[test]
fn caller_memory_is_shared_in_place() {
    let c = shm();
    let layout = std::alloc::Layout::from_size_align(PAGE, PAGE).unwrap();
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    unsafe { *p = 42 };
    let e = unsafe { c.export_create_at(p, PAGE, ExportFlags::default()).unwrap() };
    let id = e.publish(None, &[]).unwrap();
    assert_eq!(e.as_ptr(), p);
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    let mut b = [0u8; 1];
    imp.get(0, &mut b).unwrap();
    assert_eq!(b[0], 42, "the contents moved with the memory");
    imp.put(1, &[43]).unwrap();
    assert_eq!(
        unsafe { *p.add(1) },
        43,
        "the caller's pointer is the shared memory"
    );
    e.unpublish().unwrap();
    assert_eq!(imp.put(2, &[44]), Err(RsmError::ConnAborted));
    assert_eq!(unsafe { *p.add(2) }, 0);
    drop(e);
    assert_eq!(unsafe { (*p, *p.add(1)) }, (42, 43));
    unsafe { std::alloc::dealloc(p, layout) };
}

/// A program that frees the memory before the export sharing it (MPICH's rma/test3
/// frees a window's buffer before MPI_Win_free): destroying the export must neither
/// fault on the missing pages nor touch the mapping the kernel puts there next.
#[test]
fn caller_memory_unmapped_before_the_export_is_destroyed() {
    let c = shm();
    for reuse in [false, true] {
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let p = p.cast::<u8>();
        let e = unsafe {
            c.export_create_at(p, 2 * PAGE, ExportFlags::default())
                .unwrap()
        };
        e.publish(None, &[]).unwrap();
        if reuse {
            // Something else of the program's now lives at half the address range.
            // MAP_FIXED replaces the first page in one step: munmap then mmap would
            // leave a moment in which another test's thread could map there.
            let q = unsafe {
                libc::mmap(
                    p.cast(),
                    PAGE,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            assert_eq!(q.cast::<u8>(), p);
            assert_eq!(unsafe { libc::munmap(p.add(PAGE).cast(), PAGE) }, 0);
            unsafe { *p = 9 };
            drop(e);
            assert_eq!(unsafe { *p }, 9, "the new mapping is left alone");
            unsafe { libc::munmap(p.cast(), PAGE) };
        } else {
            assert_eq!(unsafe { libc::munmap(p.cast(), 2 * PAGE) }, 0);
            drop(e);
        }
    }
}

#[test]
fn unpublish_aborts_importers_and_detaches_memory() {
    let (c, e, id) = published(PAGE);
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    let m = imp.map().unwrap();
    imp.put(0, &[1, 2, 3]).unwrap();
    e.unpublish().unwrap();
    assert_eq!(imp.put(0, &[9]), Err(RsmError::ConnAborted));
    let mut b = [0u8; 3];
    assert_eq!(imp.get(0, &mut b), Err(RsmError::ConnAborted));
    assert_eq!(imp.put_scalars(0, &[9u64]), Err(RsmError::ConnAborted));
    assert_eq!(
        imp.signal_post(SignalFlags::default()),
        Err(RsmError::ConnAborted)
    );
    assert_eq!(imp.check(), Err(RsmError::ConnAborted));
    // A store through an old mapping no longer reaches the exporter.
    unsafe { *m.as_ptr().add(5) = 77 };
    assert_eq!(read_export(&e, 0, 6), vec![1, 2, 3, 0, 0, 0]);
    assert_eq!(
        c.import_connect(c.local_node(), id, Perm::RDWR)
            .unwrap_err(),
        RsmError::SegNotPublished
    );
}

#[test]
fn rebind_moves_the_segment_under_importers() {
    let c = shm();
    let e = c.export_create(PAGE, ExportFlags::default()).unwrap();
    let layout = std::alloc::Layout::from_size_align(PAGE, PAGE).unwrap();
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    assert_eq!(
        unsafe { e.rebind(p, 0, PAGE) },
        Err(RsmError::RebindNotAllowed)
    );
    let e = c
        .export_create(
            PAGE,
            ExportFlags {
                allow_rebind: true,
                ..Default::default()
            },
        )
        .unwrap();
    let id = e.publish(None, &[]).unwrap();
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    imp.put(0, &[1]).unwrap();
    unsafe { *p = 5 };
    assert_eq!(unsafe { e.rebind(p, PAGE, PAGE) }, Err(RsmError::BadOffset));
    assert_eq!(
        unsafe { e.rebind(p, 0, 2 * PAGE) },
        Err(RsmError::BadLength)
    );
    assert_eq!(
        unsafe { e.rebind(p.add(1), 0, PAGE) },
        Err(RsmError::BadMemAlignment)
    );
    unsafe { e.rebind(p, 0, PAGE).unwrap() };
    assert_eq!(e.as_ptr(), p);
    let mut b = [0u8; 1];
    imp.get(0, &mut b).unwrap();
    assert_eq!(b[0], 5, "importers see the new memory");
    imp.put(1, &[6]).unwrap();
    assert_eq!(unsafe { *p.add(1) }, 6);
    drop(imp);
    drop(e);
    unsafe { std::alloc::dealloc(p, layout) };
}

#[test]
fn barriers() {
    let (c, e, id) = published(PAGE);
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    assert_eq!(imp.mode(), BarrierMode::Implicit);
    imp.set_mode(BarrierMode::Explicit).unwrap();
    assert_eq!(imp.mode(), BarrierMode::Explicit);
    let mut bar = imp.init_barrier(BarrierType::Segment).unwrap();
    assert_eq!(bar.close(), Err(RsmError::BarrierNotOpened));
    assert_eq!(bar.order(), Err(RsmError::BarrierNotOpened));
    bar.open().unwrap();
    assert_eq!(bar.open(), Err(RsmError::BarrierOpenFailed));
    imp.put(0, &[1]).unwrap();
    bar.order().unwrap();
    imp.put(1, &[2]).unwrap();
    bar.close().unwrap();
    assert_eq!(read_export(&e, 0, 2), vec![1, 2]);
    assert_eq!(bar.close(), Err(RsmError::BarrierNotOpened));
    // An argument error is the put's own, not the scope's.
    bar.open().unwrap();
    assert_eq!(imp.put(PAGE, &[1]), Err(RsmError::BadOffset));
    bar.close().unwrap();
    // Unpublished during the scope: the close reports it, even without a transfer.
    bar.open().unwrap();
    imp.put(2, &[3]).unwrap();
    e.unpublish().unwrap();
    assert_eq!(bar.close(), Err(RsmError::ConnAborted));
    assert_eq!(bar.open(), Err(RsmError::ConnAborted));
}

#[test]
fn mappings() {
    let (c, e, id) = published(PAGE);
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    let m = imp.map().unwrap();
    assert_eq!(m.len(), PAGE);
    assert_eq!(imp.map().unwrap_err(), RsmError::SegAlreadyMapped);
    unsafe { *m.as_ptr().add(10) = 99 };
    assert_eq!(read_export(&e, 10, 1), vec![99]);
    assert!(imp.is_mapped());
    assert_eq!(imp.disconnect(), Err(RsmError::SegStillMapped));
    m.unmap().unwrap();
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    let m = imp.map().unwrap();
    drop(m);
    assert!(!imp.is_mapped());
    imp.disconnect().unwrap();
}

fn readable(fd: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    unsafe { libc::poll(&mut p, 1, 0) == 1 && p.revents & libc::POLLIN != 0 }
}

#[test]
fn signals_both_ways() {
    let (c, e, id) = published(PAGE);
    let me = c.local_node();
    let a = c.import_connect(me, id, Perm::RDWR).unwrap();
    let b = c.import_connect(me, id, Perm::READ).unwrap();
    let t = Instant::now();
    assert_eq!(
        e.signal_wait(Some(Duration::from_millis(30))),
        Err(RsmError::Timeout)
    );
    assert!(t.elapsed() >= Duration::from_millis(30));
    assert_eq!(a.signal_wait(Some(Duration::ZERO)), Err(RsmError::Timeout));
    // Importer → exporter, with the library's idea of the sender.
    let fd = e.pollfd().unwrap();
    assert!(!readable(fd));
    a.signal_post(SignalFlags::default()).unwrap();
    assert!(readable(fd));
    let s = e.signal_wait_from(Some(Duration::from_secs(1))).unwrap();
    assert_eq!((s.node, s.pid), (me, std::process::id()));
    assert!(!readable(fd));
    // Accumulated, or not.
    b.signal_post(SignalFlags::default()).unwrap();
    b.signal_post(SignalFlags::default()).unwrap();
    b.signal_post(SignalFlags {
        no_accumulate: true,
    })
    .unwrap();
    assert!(e.take_signal().unwrap().is_some());
    assert!(e.take_signal().unwrap().is_some());
    assert!(e.take_signal().unwrap().is_none());
    // Exporter → every importer.
    let fa = a.pollfd().unwrap();
    e.signal_post(SignalFlags::default()).unwrap();
    assert!(readable(fa));
    a.signal_wait(Some(Duration::from_secs(1))).unwrap();
    b.signal_wait(Some(Duration::from_secs(1))).unwrap();
    assert!(!readable(fa));
    // A waiting thread is woken by a post from another thread.
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            e.signal_post(SignalFlags::default()).unwrap();
        });
        a.signal_wait(Some(Duration::from_secs(5))).unwrap();
    });
    // A waiter is told when the segment goes away.
    assert!(b.take_signal().unwrap().is_some());
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            e.unpublish().unwrap();
        });
        assert_eq!(b.signal_wait(None), Err(RsmError::ConnAborted));
    });
}

#[test]
fn handles_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Controller>();
    both::<myrix_rsm::Export>();
    both::<myrix_rsm::Import>();
    both::<myrix_rsm::Barrier>();
    both::<myrix_rsm::Mapping>();
}
