/*
 * rsmapi.h — Sun's RSMAPI (remote shared memory, man section 3RSM) over myrix.
 *
 * Written for myrix from the RSMAPI manual pages: the names, numbers, types and
 * struct fields are the interface's, so a program written for Solaris/illumos
 * librsm compiles unchanged. Link with the flags pkg-config gives:
 *
 *   cc prog.c $(PKG_CONFIG_PATH=target/release/pkgconfig pkg-config --cflags --libs rsmapi)
 *
 * Every function returns RSM_SUCCESS (0) or one of the RSMERR_* numbers below,
 * except rsm_free_interconnect_topology, which returns nothing. See docs/rsmapi.md
 * for what myrix supports and how it differs from illumos.
 */
#ifndef MYRIX_RSMAPI_H
#define MYRIX_RSMAPI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <poll.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Solaris basic types the interface is written in (sys/types.h there) ---- */
#ifndef __sun
typedef unsigned int uint_t;
typedef unsigned long ulong_t;
typedef unsigned char uchar_t;
typedef long long offset_t;
/* glibc defines caddr_t itself for _DEFAULT_SOURCE (marking it __daddr_t_defined). */
#if !defined(__daddr_t_defined) && !defined(__caddr_t_defined)
typedef char *caddr_t;
#define __caddr_t_defined
#endif
#endif

/* Longest controller name, with its NUL (Solaris sys/param.h). */
#ifndef MAXNAMELEN
#define MAXNAMELEN 256
#endif

/* The interface version this header describes. */
#define RSM_VERSION 5

/* ---- Results ---- */
#define RSM_SUCCESS 0
#define RSMERR_BAD_LIBRARY_VERSION 1
#define RSMERR_BAD_TOPOLOGY_PTR 2
#define RSMERR_BAD_CTLR_HNDL 3
#define RSMERR_CTLR_NOT_PRESENT 4
#define RSMERR_BAD_SEG_HNDL 5
#define RSMERR_SEG_ALREADY_PUBLISHED 6
#define RSMERR_SEG_NOT_PUBLISHED 7
#define RSMERR_SEG_NOT_PUBLISHED_TO_NODE 8
#define RSMERR_SEG_ALREADY_MAPPED 9
#define RSMERR_SEG_STILL_MAPPED 10
#define RSMERR_SEG_NOT_MAPPED 11
#define RSMERR_NOT_CREATOR 12
#define RSMERR_BAD_BARRIER_PTR 13
#define RSMERR_BAD_SGIO 14
#define RSMERR_BAD_LOCALMEM_HNDL 15
#define RSMERR_BAD_ADDR 16
#define RSMERR_BAD_MEM_ALIGNMENT 17
#define RSMERR_BAD_OFFSET 18
#define RSMERR_MISALIGNED_OFFSET 19
#define RSMERR_BAD_LENGTH 20
#define RSMERR_BAD_ACL 21
#define RSMERR_BAD_SEGID 22
#define RSMERR_RESERVED_SEGID 23
#define RSMERR_SEGID_IN_USE 24
#define RSMERR_BAD_MODE 25
#define RSMERR_BAD_PERMS 26
#define RSMERR_PERM_DENIED 27
#define RSMERR_LOCKS_NOT_SUPPORTED 28
#define RSMERR_LOCKS_NOT_ENABLED 29
#define RSMERR_REBIND_NOT_ALLOWED 30
#define RSMERR_INSUFFICIENT_RESOURCES 31
#define RSMERR_INSUFFICIENT_MEM 32
#define RSMERR_MAP_FAILED 33
#define RSMERR_POLLFD_IN_USE 34
#define RSMERR_BARRIER_UNINITIALIZED 35
#define RSMERR_BARRIER_OPEN_FAILED 36
#define RSMERR_BARRIER_NOT_OPENED 37
#define RSMERR_BARRIER_FAILURE 38
#define RSMERR_REMOTE_NODE_UNREACHABLE 39
#define RSMERR_CONN_ABORTED 40
#define RSMERR_INTERRUPTED 41
#define RSMERR_TIMEOUT 42
#define RSMERR_BAD_APPID 43
#define RSMERR_BAD_CONF 44
#define RSMERR_SEG_NOT_CONNECTED 45

/* The driver-side (RSMPI) numbers. myrix returns RSMERR_INTERNAL_ERROR if the
 * library itself fails, and RSMERR_BAD_ARGS_ERRORS from
 * rsm_intr_signal_wait_pollfd for a bad descriptor array. */
#define RSMERR_INTERNAL_ERROR 100
#define RSMERR_BAD_DRIVER_VERSION 101
#define RSMERR_UNSUPPORTED_VERSION 102
#define RSMERR_DRIVER_NAME_IN_USE 103
#define RSMERR_DRIVER_NOT_REGISTERED 104
#define RSMERR_DRIVER_THREAD_RUNNING 105
#define RSMERR_NEED_THREAD_INIT 106
#define RSMERR_THREAD_NOT_INITED 107
#define RSMERR_CTLRS_REGISTERED 108
#define RSMERR_CTLR_NOT_REGISTERED 109
#define RSMERR_CTLR_ALREADY_REGISTERED 110
#define RSMERR_CTLR_IN_USE 111
#define RSMERR_NAME_TOO_LONG 112
#define RSMERR_SEG_PUBLISHED 113
#define RSMERR_SEG_NOT_PUBLISHED_TO_RSM_ADDR 114
#define RSMERR_SEG_IN_USE 115
#define RSMERR_BAD_SENDQ_HNDL 116
#define RSMERR_BAD_ARGS_ERRORS 117
#define RSMERR_BAD_MSTYPE 118
#define RSMERR_NO_BACKING_MEM 119
#define RSMERR_NOT_MEM 120
#define RSMERR_MEM_ALREADY_BOUND 121
#define RSMERR_MEM_NOT_BOUND 122
#define RSMERR_HANDLER_NOT_REGISTERED 123
#define RSMERR_NO_HANDLER 124
#define RSMERR_UNBIND_REBIND_NOT_ALLOWED 125
#define RSMERR_CALLBACKS_NOT_SUPPORTED 126
#define RSMERR_UNSUPPORTED_OPERATION 127
#define RSMERR_RSM_ADDR_UNREACHABLE 128
#define RSMERR_UNKNOWN_RSM_ADDR 129
#define RSMERR_BAD_BARRIER_HNDL 130
#define RSMERR_COMM_ERR_MAYBE_DELIVERED 131
#define RSMERR_COMM_ERR_NOT_DELIVERED 132
#define RSMERR_QUEUE_FENCE_UP 133
#define RSMERR_QUEUE_FULL 134

/* ---- Segment ids: who may use which range ---- */
#define RSM_DRIVER_PRIVATE_ID_BASE 0
#define RSM_DRIVER_PRIVATE_ID_END 0x0FFFFF
#define RSM_CLUSTER_TRANSPORT_ID_BASE 0x100000
#define RSM_CLUSTER_TRANSPORT_ID_END 0x1FFFFF
#define RSM_RSMLIB_ID_BASE 0x200000
#define RSM_RSMLIB_ID_END 0x2FFFFF
#define RSM_DLPI_ID_BASE 0x300000
#define RSM_DLPI_ID_END 0x3FFFFF
#define RSM_HPC_ID_BASE 0x400000
#define RSM_HPC_ID_END 0x4FFFFF
#define RSM_OPS_ID_BASE 0x500000
#define RSM_OPS_ID_END 0x5FFFFF
/* Applications publish under ids in this range (or let publish pick one). */
#define RSM_USER_APP_ID_BASE 0x80000000u
#define RSM_USER_APP_ID_END 0xFFFFFFFFu

/* ---- Permissions: octal, as file modes (owner, group, others) ---- */
#define RSM_PERM_NONE 0
#define RSM_PERM_READ 0400
#define RSM_PERM_WRITE 0200
#define RSM_PERM_RDWR (RSM_PERM_READ | RSM_PERM_WRITE)

/* At most this many entries in one scatter/gather list. */
#define RSM_MAX_SGIOREQS 16

/* Access sizes a controller supports (bits of the attr_*_sizes fields). */
typedef enum {
	RSM_DAS8 = 1,
	RSM_DAS16 = 2,
	RSM_DAS32 = 4,
	RSM_DAS64 = 8
} rsm_access_size_t;

typedef uint64_t rsm_addr_t;        /* a controller's hardware address */
typedef uint32_t rsm_node_id_t;     /* a node of the interconnect */
typedef uint32_t rsm_memseg_id_t;   /* the id a segment is published under */
typedef uint32_t rsm_permission_t;  /* RSM_PERM_* bits, or three octal digits */

/* Handles are opaque: the library checks each one it is given. */
typedef struct __rsm_memseg_import_handle *rsm_memseg_import_handle_t;
typedef struct __rsm_memseg_export_handle *rsm_memseg_export_handle_t;
typedef struct __rsm_localmemory_handle *rsm_localmemory_handle_t;
typedef struct __rsmapi_controller_handle *rsmapi_controller_handle_t;

/* What a barrier covers. myrix keeps one scope per import handle, whatever the type. */
typedef enum {
	RSM_BARRIER_SEGMENT = 0x01,
	RSM_BARRIER_NODE = 0x02,
	RSM_BARRIER_SEGMENT_THREAD = 0x11,
	RSM_BARRIER_NODE_THREAD = 0x12
} rsm_barrier_type_t;

/* The manual pages' name for the one barrier type they describe; no Solaris header
 * defines it. Here it is the segment barrier. */
#ifndef RSM_BAR_DEFAULT
#define RSM_BAR_DEFAULT RSM_BARRIER_SEGMENT
#endif

/* The driver-level barrier representation (rsm_common.h); RSMAPI programs use
 * rsmapi_barrier_t below. */
typedef union {
	uint64_t u64;
	int64_t i64;
	uint32_t u32[2];
	int32_t i32[2];
	uint16_t u16[4];
	int16_t i16[4];
	uint8_t u8[8];
	int8_t i8[8];
	uchar_t uc[8];
	char c[8];
	void *vp;
} rsm_barrier_component_t;

typedef struct {
	rsm_barrier_component_t comp[4];
} rsm_barrier_t;

/* Implicit (the default): each put or get reports its own error. Explicit: errors
 * between an open and a close barrier are reported by the close. */
typedef enum {
	RSM_BARRIER_MODE_EXPLICIT = 0,
	RSM_BARRIER_MODE_IMPLICIT = 1
} rsm_barrier_mode_t;

/* ---- Controller attributes ---- */
typedef struct rsmapi_controller_attr {
	uint_t attr_direct_access_sizes;      /* RSM_DAS* bits */
	uint_t attr_atomic_sizes;             /* RSM_DAS* bits */
	size_t attr_page_size;                /* export alignment and size unit */
	size_t attr_max_export_segment_size;
	size_t attr_tot_export_segment_size;
	ulong_t attr_max_export_segments;
	size_t attr_max_import_map_size;      /* 0: the controller cannot map */
	size_t attr_tot_import_map_size;
	ulong_t attr_max_import_segments;
} rsmapi_controller_attr_t;

/* One entry of a publish access list. */
typedef struct rsmapi_access_entry {
	rsm_node_id_t ae_node;           /* the node allowed to import */
	rsm_permission_t ae_permission;  /* its three octal digits */
} rsmapi_access_entry_t;

/* A barrier: filled by rsm_memseg_import_init_barrier, opaque to the program. */
typedef struct rsmapi_barrier {
	void *seg;
	uint16_t gnum;
	void *privdata;
} rsmapi_barrier_t;

/* ---- Scatter/gather ---- */
#define RSM_HANDLE_TYPE 0x01  /* io_type: local.handle names the local memory */
#define RSM_VA_TYPE 0x02      /* io_type: local.vaddr is the local memory */

typedef struct rsm_iovec {
	int io_type;
	union {
		rsm_localmemory_handle_t handle;
		caddr_t vaddr;
	} local;
	size_t local_offset;
	size_t remote_offset;
	size_t transfer_length;
} rsm_iovec_t;

typedef struct rsm_scat_gath {
	rsm_node_id_t local_nodeid;
	ulong_t io_request_count;   /* 1 .. RSM_MAX_SGIOREQS */
	ulong_t io_residual_count;  /* set by the call: entries not done */
	uint_t flags;               /* RSM_IMPLICIT_SIGPOST [| RSM_SIGPOST_NO_ACCUMULATE] */
	rsm_memseg_import_handle_t remote_handle;
	rsm_iovec_t *iovec;
} rsm_scat_gath_t;

/* Export flags (rsm_memseg_export_create). */
#define RSM_ALLOW_REBIND 0x01
#define RSM_CREATE_SEG_DONTWAIT 0x02
#define RSM_LOCK_OPS 0x04

/* rsm_scat_gath_t.flags: post a signal once the whole list is done. */
#define RSM_IMPLICIT_SIGPOST 0x01
/* rsm_intr_signal_post flags: drop this event if one is already pending. */
#define RSM_SIGPOST_NO_ACCUMULATE 0x02

/* rsm_memseg_import_map attributes. */
typedef enum {
	RSM_MAP_NONE = 0x0,     /* the library picks the address */
	RSM_MAP_FIXED = 0x1,    /* at *address */
	RSM_MAP_RESERVED = 0x2
} rsm_attribute_t;

/* ---- Topology ---- */
#define RSM_CONNECTION_ACTIVE 3

typedef struct rsm_topology_hdr {
	rsm_node_id_t local_nodeid;
	uint_t local_cntlr_count;
} rsm_topology_hdr_t;

typedef struct rsm_connections_hdr {
	char cntlr_name[MAXNAMELEN];
	rsm_addr_t local_hwaddr;
	int remote_cntlr_count;
} rsm_connections_hdr_t;

typedef struct rsm_remote_cntlr {
	rsm_node_id_t remote_nodeid;
	char remote_cntlrname[MAXNAMELEN];
	rsm_addr_t remote_hwaddr;
	uint_t connection_state;  /* usable when RSM_CONNECTION_ACTIVE */
} rsm_remote_cntlr_t;

/* remote_cntlr has hdr.remote_cntlr_count entries. */
typedef struct rsm_connection {
	rsm_connections_hdr_t hdr;
	rsm_remote_cntlr_t remote_cntlr[1];
} rsm_connections_t;

/* connections has topology_hdr.local_cntlr_count entries. */
typedef struct rsm_topology {
	rsm_topology_hdr_t topology_hdr;
	rsm_connections_t *connections[1];
} rsm_topology_t;

/* ---- Controllers ---- */
int rsm_get_controller(char *name, rsmapi_controller_handle_t *controller);
int rsm_get_controller_attr(rsmapi_controller_handle_t chdl,
    rsmapi_controller_attr_t *attr);
int rsm_release_controller(rsmapi_controller_handle_t chdl);
int rsm_get_interconnect_topology(rsm_topology_t **topology_data);
void rsm_free_interconnect_topology(rsm_topology_t *topology_data);

/* ---- Export side ---- */
int rsm_memseg_export_create(rsmapi_controller_handle_t controller,
    rsm_memseg_export_handle_t *memseg, void *vaddr, size_t length,
    uint_t flags);
int rsm_memseg_export_destroy(rsm_memseg_export_handle_t memseg);
int rsm_memseg_export_rebind(rsm_memseg_export_handle_t memseg, void *vaddr,
    offset_t off, size_t length);
int rsm_memseg_export_publish(rsm_memseg_export_handle_t memseg,
    rsm_memseg_id_t *segment_id, rsmapi_access_entry_t access_list[],
    uint_t access_list_length);
int rsm_memseg_export_unpublish(rsm_memseg_export_handle_t memseg);
int rsm_memseg_export_republish(rsm_memseg_export_handle_t memseg,
    rsmapi_access_entry_t access_list[], uint_t access_list_length);

/* ---- Import side ---- */
int rsm_memseg_import_connect(rsmapi_controller_handle_t controller,
    rsm_node_id_t node_id, rsm_memseg_id_t segment_id, rsm_permission_t perm,
    rsm_memseg_import_handle_t *im_memseg);
int rsm_memseg_import_disconnect(rsm_memseg_import_handle_t im_memseg);

int rsm_memseg_import_get8(rsm_memseg_import_handle_t im_memseg, off_t offset,
    uint8_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_get16(rsm_memseg_import_handle_t im_memseg, off_t offset,
    uint16_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_get32(rsm_memseg_import_handle_t im_memseg, off_t offset,
    uint32_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_get64(rsm_memseg_import_handle_t im_memseg, off_t offset,
    uint64_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_get(rsm_memseg_import_handle_t im_memseg, off_t offset,
    void *dst_addr, size_t length);
int rsm_memseg_import_getv(rsm_scat_gath_t *sg_io);

int rsm_memseg_import_put8(rsm_memseg_import_handle_t im_memseg, off_t offset,
    uint8_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_put16(rsm_memseg_import_handle_t im_memseg, off_t offset,
    uint16_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_put32(rsm_memseg_import_handle_t im_memseg, off_t offset,
    uint32_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_put64(rsm_memseg_import_handle_t im_memseg, off_t offset,
    uint64_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_put(rsm_memseg_import_handle_t im_memseg, off_t offset,
    void *src_addr, size_t length);
int rsm_memseg_import_putv(rsm_scat_gath_t *sg_io);

int rsm_memseg_import_map(rsm_memseg_import_handle_t im_memseg,
    void **address, rsm_attribute_t attr, rsm_permission_t perm,
    off_t offset, size_t length);
int rsm_memseg_import_unmap(rsm_memseg_import_handle_t im_memseg);

/* ---- Barriers ---- */
int rsm_memseg_import_init_barrier(rsm_memseg_import_handle_t im_memseg,
    rsm_barrier_type_t type, rsmapi_barrier_t *barrier);
int rsm_memseg_import_open_barrier(rsmapi_barrier_t *barrier);
int rsm_memseg_import_close_barrier(rsmapi_barrier_t *barrier);
int rsm_memseg_import_order_barrier(rsmapi_barrier_t *barrier);
int rsm_memseg_import_destroy_barrier(rsmapi_barrier_t *barrier);
int rsm_memseg_import_get_mode(rsm_memseg_import_handle_t im_memseg,
    rsm_barrier_mode_t *mode);
int rsm_memseg_import_set_mode(rsm_memseg_import_handle_t im_memseg,
    rsm_barrier_mode_t mode);

/* ---- Signals (either kind of segment handle, cast to void *) ---- */
int rsm_intr_signal_post(void *memseg, uint_t flags);
int rsm_intr_signal_wait(void *memseg, int timeout);
int rsm_memseg_get_pollfd(void *memseg, struct pollfd *fd);
int rsm_memseg_release_pollfd(void *memseg);
int rsm_intr_signal_wait_pollfd(struct pollfd fds[], nfds_t nfds, int timeout,
    int *numfdsp);

/* ---- Local memory handles for scatter/gather ---- */
int rsm_create_localmemory_handle(rsmapi_controller_handle_t handle,
    rsm_localmemory_handle_t *l_handle, caddr_t local_vaddr, size_t length);
int rsm_free_localmemory_handle(rsmapi_controller_handle_t handle,
    rsm_localmemory_handle_t l_handle);

/* ---- Segment id ranges reserved for applications ----
 * Reads MYRIX_RSM_SEGMENTID_FILE if set, else /etc/rsm/rsm.segmentid: lines
 * "reserve <appid> <hex base> <length>", '#' in the first column for comments. */
int rsm_get_segmentid_range(const char *appid, rsm_memseg_id_t *baseid,
    uint32_t *length);

#ifdef __cplusplus
}
#endif

#endif /* MYRIX_RSMAPI_H */
