//! Controllers: rsm_get_controller, rsm_get_controller_attr, rsm_release_controller,
//! and the interconnect topology.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_ulong, CStr};
use std::sync::Mutex;

use myrix_rsm::{Controller, RsmError};

use crate::ffi::{guard, write_out};
use crate::objects::{controller, insert, lock, Handle, CONTROLLERS};

/// Longest controller name with its NUL (`MAXNAMELEN`).
pub const MAXNAMELEN: usize = 256;
/// `RSM_CONNECTION_ACTIVE`.
pub const RSM_CONNECTION_ACTIVE: c_uint = 3;
/// `RSM_DAS8 | RSM_DAS16 | RSM_DAS32 | RSM_DAS64`.
const ALL_ACCESS_SIZES: c_uint = 1 | 2 | 4 | 8;
/// The controllers myrix may have, in the order the topology lists them.
pub const CONTROLLER_NAMES: [&str; 4] = ["shm", "udp", "eth", "sim"];

/// `rsmapi_controller_attr_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
#[allow(non_camel_case_types)]
pub struct rsmapi_controller_attr_t {
    pub attr_direct_access_sizes: c_uint,
    pub attr_atomic_sizes: c_uint,
    pub attr_page_size: usize,
    pub attr_max_export_segment_size: usize,
    pub attr_tot_export_segment_size: usize,
    pub attr_max_export_segments: c_ulong,
    pub attr_max_import_map_size: usize,
    pub attr_tot_import_map_size: usize,
    pub attr_max_import_segments: c_ulong,
}

/// How many segments of each side one process may hold (the handle tables' size).
pub const MAX_SEGMENTS: c_ulong = 1 << 20;

/// The attributes RSMAPI reports for `c`.
pub fn attributes(c: &Controller) -> rsmapi_controller_attr_t {
    let a = c.attr();
    let map = if a.map_supported {
        a.max_segment_size
    } else {
        0
    };
    rsmapi_controller_attr_t {
        attr_direct_access_sizes: ALL_ACCESS_SIZES,
        attr_atomic_sizes: ALL_ACCESS_SIZES,
        attr_page_size: a.page_size,
        attr_max_export_segment_size: a.max_segment_size,
        // No limit is known beyond one segment's; memory runs out first.
        attr_tot_export_segment_size: a.max_segment_size,
        attr_max_export_segments: MAX_SEGMENTS,
        attr_max_import_map_size: map,
        attr_tot_import_map_size: map,
        attr_max_import_segments: MAX_SEGMENTS,
    }
}

/// Gets a controller by name: "shm" (alias "loopback"); others once built.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string; `ctrl` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rsm_get_controller(name: *mut c_char, ctrl: *mut Handle) -> c_int {
    guard(|| {
        if name.is_null() || ctrl.is_null() {
            return Err(RsmError::BadAddr);
        }
        // SAFETY: not NULL; the caller promises a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(name) };
        let name = name.to_str().map_err(|_| RsmError::CtlrNotPresent)?;
        let c = Controller::get(name)?;
        let h = insert(&CONTROLLERS, c)?;
        // What the program leaves unacknowledged when it exits is drained then.
        crate::exit::register();
        // SAFETY: checked not NULL above; the caller promises it is writable.
        unsafe { write_out(ctrl, h as Handle) }
    })
}

/// # Safety
/// `attr` is NULL or points to a writable `rsmapi_controller_attr_t`.
#[no_mangle]
pub unsafe extern "C" fn rsm_get_controller_attr(
    chdl: Handle,
    attr: *mut rsmapi_controller_attr_t,
) -> c_int {
    guard(|| {
        let c = controller(chdl)?;
        // SAFETY: NULL is refused by write_out; the caller promises it is writable.
        unsafe { write_out(attr, attributes(&c)) }
    })
}

#[no_mangle]
pub extern "C" fn rsm_release_controller(chdl: Handle) -> c_int {
    guard(|| {
        CONTROLLERS
            .remove(chdl as usize)
            .map(drop)
            .ok_or(RsmError::BadCtlrHndl)
    })
}

// ---- Topology ----

#[repr(C)]
#[derive(Clone, Copy)]
struct TopologyHdr {
    local_nodeid: u32,
    local_cntlr_count: c_uint,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct ConnectionsHdr {
    cntlr_name: [c_char; MAXNAMELEN],
    local_hwaddr: u64,
    remote_cntlr_count: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct RemoteCntlr {
    remote_nodeid: u32,
    remote_cntlrname: [c_char; MAXNAMELEN],
    remote_hwaddr: u64,
    connection_state: c_uint,
}

/// Layout facts the C test compares with the header.
pub const TOPOLOGY_SIZES: [(&str, usize); 3] = [
    (
        "rsm_connections_hdr_t",
        std::mem::size_of::<ConnectionsHdr>(),
    ),
    ("rsm_remote_cntlr_t", std::mem::size_of::<RemoteCntlr>()),
    ("rsm_topology_hdr_t", std::mem::size_of::<TopologyHdr>()),
];

/// One local controller as the topology shows it.
pub struct LocalController {
    pub name: String,
    pub node: u32,
    pub remote: Vec<u32>,
}

/// The controllers this host has, with the nodes each reaches.
pub fn local_controllers() -> Vec<LocalController> {
    CONTROLLER_NAMES
        .iter()
        .filter_map(|n| Controller::get(n).ok())
        .map(|c| LocalController {
            name: c.name().to_string(),
            node: c.local_node().0,
            remote: c.topology().iter().map(|n| n.0).collect(),
        })
        .collect()
}

fn c_name(s: &str) -> [c_char; MAXNAMELEN] {
    let mut out = [0 as c_char; MAXNAMELEN];
    for (o, b) in out.iter_mut().zip(s.bytes().take(MAXNAMELEN - 1)) {
        *o = b as c_char;
    }
    out
}

/// A block of 8-byte words the topology is laid out in: every struct in it is
/// 8-aligned at most, and each is placed at a multiple of 8.
struct Block {
    words: Box<[u64]>,
}

impl Block {
    fn new(bytes: usize) -> Block {
        Block {
            words: vec![0u64; bytes.div_ceil(8)].into_boxed_slice(),
        }
    }

    fn base(&mut self) -> *mut u8 {
        self.words.as_mut_ptr().cast()
    }

    /// Writes `v` at byte `at`, which must leave room for it and be 8-aligned.
    fn put<T>(&mut self, at: usize, v: T) {
        assert!(at % 8 == 0 && std::mem::align_of::<T>() <= 8);
        assert!(at + std::mem::size_of::<T>() <= self.words.len() * 8);
        // SAFETY: in bounds and aligned (checked above); the block owns the memory.
        unsafe { self.base().add(at).cast::<T>().write(v) };
    }
}

fn round8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// The topology as RSMAPI lays it out, in one block.
fn build_topology(ctls: &[LocalController]) -> Block {
    let hdr = std::mem::size_of::<TopologyHdr>();
    let ptrs = hdr + std::mem::size_of::<usize>() * ctls.len().max(1);
    let conn_hdr = std::mem::size_of::<ConnectionsHdr>();
    let remote = std::mem::size_of::<RemoteCntlr>();
    let sizes: Vec<usize> = ctls
        .iter()
        .map(|c| round8(conn_hdr + remote * c.remote.len().max(1)))
        .collect();
    let mut block = Block::new(round8(ptrs) + sizes.iter().sum::<usize>());
    block.put(
        0,
        TopologyHdr {
            local_nodeid: ctls.first().map_or(0, |c| c.node),
            local_cntlr_count: ctls.len() as c_uint,
        },
    );
    let mut at = round8(ptrs);
    for (i, (c, size)) in ctls.iter().zip(&sizes).enumerate() {
        let addr = block.base() as usize + at;
        block.put(hdr + i * std::mem::size_of::<usize>(), addr);
        block.put(
            at,
            ConnectionsHdr {
                cntlr_name: c_name(&c.name),
                local_hwaddr: u64::from(c.node),
                remote_cntlr_count: c.remote.len() as c_int,
            },
        );
        for (j, &node) in c.remote.iter().enumerate() {
            block.put(
                at + conn_hdr + j * remote,
                RemoteCntlr {
                    remote_nodeid: node,
                    remote_cntlrname: c_name(&c.name),
                    remote_hwaddr: u64::from(node),
                    connection_state: RSM_CONNECTION_ACTIVE,
                },
            );
        }
        at += size;
    }
    block
}

/// Topologies handed out and not yet freed, by address: only these are freed.
static TOPOLOGIES: Mutex<Option<HashMap<usize, Block>>> = Mutex::new(None);

/// # Safety
/// `topology_data` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rsm_get_interconnect_topology(topology_data: *mut Handle) -> c_int {
    guard(|| {
        if topology_data.is_null() {
            return Err(RsmError::BadTopologyPtr);
        }
        let mut block = build_topology(&local_controllers());
        let addr = block.base();
        lock(&TOPOLOGIES)
            .get_or_insert_with(HashMap::new)
            .insert(addr as usize, block);
        // SAFETY: checked not NULL; the caller promises it is writable.
        unsafe { write_out(topology_data, addr.cast()) }
    })
}

/// Frees a topology; anything else (NULL, freed twice, a stray pointer) is ignored.
#[no_mangle]
pub extern "C" fn rsm_free_interconnect_topology(topology_data: Handle) {
    let _ = guard(|| {
        if let Some(m) = lock(&TOPOLOGIES).as_mut() {
            m.remove(&(topology_data as usize));
        }
        Ok(())
    });
}

/// How many topologies are live (for tests).
pub fn live_topologies() -> usize {
    lock(&TOPOLOGIES).as_ref().map_or(0, HashMap::len)
}
