//! The raw-Ethernet transport's receive ring (`PACKET_RX_RING`, `TPACKET_V2`): the
//! kernel writes each arriving frame into memory shared with the process, so looking
//! for a frame is a load of its slot's status word, not a `recvfrom(2)`, and taking
//! one costs no system call and no copy out of the kernel.
//!
//! A waiting rank looks at its socket many times per message (most find nothing:
//! docs/mpi-net.md, "Session 28"); with the ring an empty look costs a few
//! instructions, and the frame that ends the wait is read where the kernel put it.
//! `poll(2)` on the socket still reports a frame waiting (the agent's sleep).
//!
//! Used for the length-prefixed frames of `eth:` when the link's MTU fits a slot
//! ([`MAX_SLOT`]); `MYRIX_ETH_RING=0` turns it off (a `recvfrom(2)` per frame, as
//! before). Frames are taken in the ring's order, each slot given back to the kernel
//! once its frame was handled.
#![allow(unsafe_code)]

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};

// <linux/if_packet.rs>, spelled here: the values are the kernel's ABI.
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_VERSION: libc::c_int = 10;
const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
/// `TPACKET_ALIGN(sizeof(struct tpacket2_hdr))`: where the `sockaddr_ll` starts.
const SLL_AT: usize = 32;

/// The largest slot: links with a larger MTU (jumbo frames up to 64 KiB) receive with
/// `recvfrom(2)`, whose buffer takes any frame.
pub const MAX_SLOT: usize = 16 << 10;
/// The ring's memory: as many 1500-byte frames as the 8 MiB socket buffer took.
const RING_BYTES: usize = 8 << 20;
/// A block of slots (a multiple of the page size and of every slot size).
const BLOCK: usize = 64 << 10;

#[repr(C)]
struct TpacketReq {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
}

/// The ring of one socket, mapped.
pub struct RxRing {
    base: *mut u8,
    len: usize,
    slot: usize,
    slots: usize,
    head: usize,
}

// SAFETY: the mapping is owned by the ring and touched only through `&mut self` (the
// endpoint's lock); the kernel's writes are ordered by each slot's status word.
unsafe impl Send for RxRing {}

/// A frame in the ring: its bytes (from the network header on), the sender's MAC and
/// the packet type (`PACKET_OUTGOING`, ...).
pub struct Frame<'a> {
    pub bytes: &'a [u8],
    pub from: [u8; 6],
    pub pkttype: u8,
}

impl RxRing {
    /// Sets up a ring on `fd` (an `AF_PACKET` socket) for frames of a link of MTU
    /// `link_mtu`. `None` when turned off, the MTU does not fit a slot, or the kernel
    /// refused (the socket then receives as before).
    pub fn open(fd: RawFd, link_mtu: usize) -> Option<RxRing> {
        if std::env::var("MYRIX_ETH_RING").is_ok_and(|v| v == "0") {
            return None;
        }
        // The slot holds the header, the address, alignment and the frame.
        let slot = (link_mtu + 128).next_power_of_two();
        if slot > MAX_SLOT {
            return None;
        }
        let version = TPACKET_V2;
        let req = TpacketReq {
            block_size: BLOCK as u32,
            block_nr: (RING_BYTES / BLOCK) as u32,
            frame_size: slot as u32,
            frame_nr: (RING_BYTES / slot) as u32,
        };
        // SAFETY: options of the sizes given, on a socket the caller owns.
        let ok = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_PACKET,
                PACKET_VERSION,
                &version as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as u32,
            ) == 0
                && libc::setsockopt(
                    fd,
                    libc::SOL_PACKET,
                    PACKET_RX_RING,
                    &req as *const TpacketReq as *const libc::c_void,
                    std::mem::size_of::<TpacketReq>() as u32,
                ) == 0
        };
        if !ok {
            return None;
        }
        // SAFETY: maps the ring just set up, shared with the kernel.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                RING_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        Some(RxRing {
            base: base as *mut u8,
            len: RING_BYTES,
            slot,
            slots: RING_BYTES / slot,
            head: 0,
        })
    }

    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: slot `i` (< slots) lies in the mapping; its first word is the status,
        // 4-aligned (slots are 16-aligned), written by the kernel and by us.
        unsafe { &*(self.base.add(i * self.slot) as *const AtomicU32) }
    }

    /// Hands the next frame to `f` and gives its slot back; false when none is there.
    #[inline]
    pub fn next(&mut self, f: impl FnOnce(Frame<'_>)) -> bool {
        let st = self.status(self.head);
        if st.load(Ordering::Acquire) & TP_STATUS_USER == 0 {
            return false;
        }
        // SAFETY: the slot is ours until given back (TP_STATUS_USER); the header's
        // fields are read as the kernel laid them out.
        let p = unsafe { self.base.add(self.head * self.slot) };
        let rd32 = |at: usize| unsafe { (p.add(at) as *const u32).read_unaligned() };
        let rd16 = |at: usize| unsafe { (p.add(at) as *const u16).read_unaligned() };
        let len = rd32(4) as usize;
        let snaplen = rd32(8) as usize;
        let net = usize::from(rd16(14));
        let mut from = [0u8; 6];
        // SAFETY: the sockaddr_ll follows the header, in the slot.
        let (pkttype, addr) = unsafe { (*p.add(SLL_AT + 10), p.add(SLL_AT + 12)) };
        // SAFETY: 6 bytes of the address, in the slot.
        unsafe { std::ptr::copy_nonoverlapping(addr, from.as_mut_ptr(), 6) };
        // A frame cut short (larger than the slot: never at the link's MTU) or that does
        // not lie in its slot is skipped, as a lost frame would be.
        if snaplen == len && net + snaplen <= self.slot {
            // SAFETY: in the slot (checked), ours until given back below.
            let bytes = unsafe { std::slice::from_raw_parts(p.add(net), snaplen) };
            f(Frame {
                bytes,
                from,
                pkttype,
            });
        }
        st.store(TP_STATUS_KERNEL, Ordering::Release);
        self.head = (self.head + 1) % self.slots;
        true
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `open`, unmapped once.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}
