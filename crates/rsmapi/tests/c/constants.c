/* Checks rsmapi.h against RSMAPI's documented values: constants at compile time
 * (_Static_assert), and prints every error number and the layout of every struct
 * for the Rust test (tests/c_programs.rs) to compare with the library's own. */
#include <rsmapi.h>
#include <stddef.h>
#include <stdio.h>

_Static_assert(RSM_SUCCESS == 0, "RSM_SUCCESS");
_Static_assert(RSM_PERM_NONE == 0 && RSM_PERM_READ == 0400 && RSM_PERM_WRITE == 0200 &&
               RSM_PERM_RDWR == 0600, "permissions");
_Static_assert(RSM_ALLOW_REBIND == 0x01 && RSM_CREATE_SEG_DONTWAIT == 0x02 && RSM_LOCK_OPS == 0x04,
               "export flags");
_Static_assert(RSM_IMPLICIT_SIGPOST == 0x01 && RSM_SIGPOST_NO_ACCUMULATE == 0x02, "signal flags");
_Static_assert(RSM_BARRIER_MODE_EXPLICIT == 0 && RSM_BARRIER_MODE_IMPLICIT == 1, "barrier modes");
_Static_assert(RSM_BARRIER_SEGMENT == 0x01 && RSM_BARRIER_NODE == 0x02 &&
               RSM_BARRIER_SEGMENT_THREAD == 0x11 && RSM_BARRIER_NODE_THREAD == 0x12,
               "barrier types");
_Static_assert(RSM_BAR_DEFAULT == RSM_BARRIER_SEGMENT, "RSM_BAR_DEFAULT");
_Static_assert(RSM_MAP_NONE == 0 && RSM_MAP_FIXED == 1 && RSM_MAP_RESERVED == 2, "map attributes");
_Static_assert(RSM_MAX_SGIOREQS == 16 && RSM_HANDLE_TYPE == 1 && RSM_VA_TYPE == 2, "scatter/gather");
_Static_assert(RSM_USER_APP_ID_BASE == 0x80000000u && RSM_USER_APP_ID_END == 0xFFFFFFFFu, "user ids");
_Static_assert(RSM_HPC_ID_BASE == 0x400000 && RSM_HPC_ID_END == 0x4FFFFF, "HPC ids");
_Static_assert(RSM_DAS8 == 1 && RSM_DAS16 == 2 && RSM_DAS32 == 4 && RSM_DAS64 == 8, "access sizes");
_Static_assert(RSM_CONNECTION_ACTIVE == 3 && RSM_VERSION == 5, "misc");
_Static_assert(sizeof(rsm_node_id_t) == 4 && sizeof(rsm_memseg_id_t) == 4 &&
               sizeof(rsm_permission_t) == 4 && sizeof(rsm_addr_t) == 8, "scalar types");
_Static_assert(sizeof(rsm_barrier_t) == 32, "rsm_barrier_t");
_Static_assert(RSMERR_BAD_ARGS_ERRORS == 117 && RSMERR_INTERNAL_ERROR == 100, "RSMPI numbers");

#define E(name) printf("%s %d\n", #name, name)
#define SIZE(t) printf("sizeof %s %zu\n", #t, sizeof(t))
#define OFF(t, f) printf("offsetof %s.%s %zu\n", #t, #f, offsetof(t, f))

int main(void)
{
	E(RSMERR_BAD_LIBRARY_VERSION); E(RSMERR_BAD_TOPOLOGY_PTR); E(RSMERR_BAD_CTLR_HNDL);
	E(RSMERR_CTLR_NOT_PRESENT); E(RSMERR_BAD_SEG_HNDL); E(RSMERR_SEG_ALREADY_PUBLISHED);
	E(RSMERR_SEG_NOT_PUBLISHED); E(RSMERR_SEG_NOT_PUBLISHED_TO_NODE);
	E(RSMERR_SEG_ALREADY_MAPPED); E(RSMERR_SEG_STILL_MAPPED); E(RSMERR_SEG_NOT_MAPPED);
	E(RSMERR_NOT_CREATOR); E(RSMERR_BAD_BARRIER_PTR); E(RSMERR_BAD_SGIO);
	E(RSMERR_BAD_LOCALMEM_HNDL); E(RSMERR_BAD_ADDR); E(RSMERR_BAD_MEM_ALIGNMENT);
	E(RSMERR_BAD_OFFSET); E(RSMERR_MISALIGNED_OFFSET); E(RSMERR_BAD_LENGTH); E(RSMERR_BAD_ACL);
	E(RSMERR_BAD_SEGID); E(RSMERR_RESERVED_SEGID); E(RSMERR_SEGID_IN_USE); E(RSMERR_BAD_MODE);
	E(RSMERR_BAD_PERMS); E(RSMERR_PERM_DENIED); E(RSMERR_LOCKS_NOT_SUPPORTED);
	E(RSMERR_LOCKS_NOT_ENABLED); E(RSMERR_REBIND_NOT_ALLOWED); E(RSMERR_INSUFFICIENT_RESOURCES);
	E(RSMERR_INSUFFICIENT_MEM); E(RSMERR_MAP_FAILED); E(RSMERR_POLLFD_IN_USE);
	E(RSMERR_BARRIER_UNINITIALIZED); E(RSMERR_BARRIER_OPEN_FAILED); E(RSMERR_BARRIER_NOT_OPENED);
	E(RSMERR_BARRIER_FAILURE); E(RSMERR_REMOTE_NODE_UNREACHABLE); E(RSMERR_CONN_ABORTED);
	E(RSMERR_INTERRUPTED); E(RSMERR_TIMEOUT); E(RSMERR_BAD_APPID); E(RSMERR_BAD_CONF);
	E(RSMERR_SEG_NOT_CONNECTED);

	SIZE(rsmapi_controller_attr_t);
	OFF(rsmapi_controller_attr_t, attr_atomic_sizes);
	OFF(rsmapi_controller_attr_t, attr_page_size);
	OFF(rsmapi_controller_attr_t, attr_max_export_segments);
	OFF(rsmapi_controller_attr_t, attr_max_import_segments);
	SIZE(rsmapi_access_entry_t);
	OFF(rsmapi_access_entry_t, ae_permission);
	SIZE(rsmapi_barrier_t);
	OFF(rsmapi_barrier_t, gnum);
	OFF(rsmapi_barrier_t, privdata);
	SIZE(rsm_iovec_t);
	OFF(rsm_iovec_t, local);
	OFF(rsm_iovec_t, local_offset);
	OFF(rsm_iovec_t, transfer_length);
	SIZE(rsm_scat_gath_t);
	OFF(rsm_scat_gath_t, io_request_count);
	OFF(rsm_scat_gath_t, flags);
	OFF(rsm_scat_gath_t, remote_handle);
	OFF(rsm_scat_gath_t, iovec);
	SIZE(rsm_topology_hdr_t);
	SIZE(rsm_connections_hdr_t);
	SIZE(rsm_remote_cntlr_t);
	OFF(rsm_topology_t, connections);
	OFF(rsm_connections_t, remote_cntlr);
	SIZE(rsm_barrier_mode_t);
	SIZE(rsm_attribute_t);
	SIZE(rsm_barrier_type_t);
	SIZE(rsm_memseg_import_handle_t);
	return 0;
}
