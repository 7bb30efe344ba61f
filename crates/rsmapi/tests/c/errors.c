/* Bad arguments from C get RSMAPI's error numbers, never a crash; and one process
 * moves data through the loopback controller. Prints one line per failed check and
 * a summary; exits 1 if any check failed. Run by tests/c_programs.rs, which sets
 * MYRIX_RSM_SEGMENTID_FILE. */
#define _POSIX_C_SOURCE 200809L
#include <rsmapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int checks, failures;

#define CHECK(call, want)                                                             \
	do {                                                                          \
		int got_ = (call);                                                    \
		checks++;                                                             \
		if (got_ != (want)) {                                                 \
			failures++;                                                   \
			printf("FAIL line %d: %s = %d, want %s (%d)\n", __LINE__, #call, \
			    got_, #want, (int)(want));                                \
		}                                                                     \
	} while (0)

#define FORGED ((void *)0x1234)

int main(void)
{
	rsmapi_controller_handle_t c, c2;
	rsmapi_controller_attr_t attr;
	rsm_memseg_export_handle_t ex;
	rsm_memseg_import_handle_t im, ro;
	rsm_memseg_id_t id;
	rsm_topology_t *topo;
	rsmapi_barrier_t bar, zero_bar;
	rsm_barrier_mode_t mode;
	rsm_localmemory_handle_t lh;
	rsm_scat_gath_t sg;
	rsm_iovec_t iov[RSM_MAX_SGIOREQS + 1];
	uint32_t len32, words[4] = { 1, 2, 3, 4 }, back32[4];
	uint64_t big = 0x0123456789abcdefULL, back64 = 0;
	uint16_t h16[2] = { 0xbeef, 0xcafe }, b16[2];
	uint8_t b8[3] = { 7, 8, 9 }, r8[3];
	char msg[] = "hello, segment", buf[64], local[8192];
	void *addr = NULL;
	rsm_node_id_t node;
	size_t page;

	/* Controllers. */
	CHECK(rsm_get_controller(NULL, &c), RSMERR_BAD_ADDR);
	CHECK(rsm_get_controller("nosuch0", &c), RSMERR_CTLR_NOT_PRESENT);
	CHECK(rsm_get_controller("shm", NULL), RSMERR_BAD_ADDR);
	CHECK(rsm_get_controller("loopback", &c2), RSM_SUCCESS);
	CHECK(rsm_release_controller(c2), RSM_SUCCESS);
	CHECK(rsm_release_controller(c2), RSMERR_BAD_CTLR_HNDL);
	CHECK(rsm_get_controller_attr(c2, &attr), RSMERR_BAD_CTLR_HNDL);
	CHECK(rsm_get_controller_attr(NULL, &attr), RSMERR_BAD_CTLR_HNDL);
	CHECK(rsm_get_controller_attr(FORGED, &attr), RSMERR_BAD_CTLR_HNDL);
	CHECK(rsm_get_controller("shm", &c), RSM_SUCCESS);
	CHECK(rsm_get_controller_attr(c, NULL), RSMERR_BAD_ADDR);
	CHECK(rsm_get_controller_attr(c, &attr), RSM_SUCCESS);
	page = attr.attr_page_size;
	CHECK(rsm_get_interconnect_topology(NULL), RSMERR_BAD_TOPOLOGY_PTR);
	CHECK(rsm_get_interconnect_topology(&topo), RSM_SUCCESS);
	node = topo->topology_hdr.local_nodeid;
	printf("topology: node %u, %u controller(s), first %s\n", (unsigned)node,
	    topo->topology_hdr.local_cntlr_count, topo->connections[0]->hdr.cntlr_name);
	rsm_free_interconnect_topology(topo);
	rsm_free_interconnect_topology(topo); /* ignored */
	rsm_free_interconnect_topology(NULL);
	rsm_free_interconnect_topology((rsm_topology_t *)FORGED);

	/* Export. */
	CHECK(rsm_memseg_export_create(NULL, &ex, NULL, page, 0), RSMERR_BAD_CTLR_HNDL);
	CHECK(rsm_memseg_export_create(c, NULL, NULL, page, 0), RSMERR_BAD_ADDR);
	CHECK(rsm_memseg_export_create(c, &ex, NULL, 0, 0), RSMERR_BAD_LENGTH);
	CHECK(rsm_memseg_export_create(c, &ex, NULL, page + 1, 0), RSMERR_BAD_LENGTH);
	CHECK(rsm_memseg_export_create(c, &ex, local + 1, page, 0), RSMERR_BAD_MEM_ALIGNMENT);
	CHECK(rsm_memseg_export_create(c, &ex, NULL, 2 * page, 0), RSM_SUCCESS);
	CHECK(rsm_memseg_export_rebind(ex, NULL, 0, page), RSMERR_BAD_ADDR);
	CHECK(rsm_memseg_export_publish(ex, NULL, NULL, 0), RSMERR_BAD_ADDR);
	id = 0;
	CHECK(rsm_memseg_export_publish(ex, &id, NULL, 3), RSMERR_BAD_ACL);
	id = 5;
	CHECK(rsm_memseg_export_publish(ex, &id, NULL, 0), RSMERR_RESERVED_SEGID);
	CHECK(rsm_memseg_export_publish(FORGED, &id, NULL, 0), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_memseg_export_unpublish(ex), RSMERR_SEG_NOT_PUBLISHED);
	id = 0;
	CHECK(rsm_memseg_export_publish(ex, &id, NULL, 0), RSM_SUCCESS);
	CHECK(id >= RSM_USER_APP_ID_BASE, 1);
	CHECK(rsm_memseg_export_publish(ex, &id, NULL, 0), RSMERR_SEG_ALREADY_PUBLISHED);

	/* Import. */
	CHECK(rsm_memseg_import_connect(c, node, id, RSM_PERM_RDWR, NULL), RSMERR_BAD_ADDR);
	CHECK(rsm_memseg_import_connect(c, node, id, 0, &im), RSMERR_BAD_PERMS);
	CHECK(rsm_memseg_import_connect(c, node, id ^ 1, RSM_PERM_RDWR, &im), RSMERR_SEG_NOT_PUBLISHED);
	CHECK(rsm_memseg_import_connect(c, node, id, RSM_PERM_RDWR, &im), RSM_SUCCESS);
	CHECK(rsm_memseg_import_connect(c, node, id, RSM_PERM_READ, &ro), RSM_SUCCESS);

	CHECK(rsm_memseg_import_put(im, 0, NULL, 4), RSMERR_BAD_ADDR);
	CHECK(rsm_memseg_import_put(im, -1, msg, 4), RSMERR_BAD_OFFSET);
	CHECK(rsm_memseg_import_put(im, (off_t)(4 * page), msg, 4), RSMERR_BAD_OFFSET);
	CHECK(rsm_memseg_import_put(im, (off_t)(2 * page - 2), msg, 4), RSMERR_BAD_LENGTH);
	CHECK(rsm_memseg_import_put(im, 0, msg, (size_t)-1), RSMERR_BAD_LENGTH);
	CHECK(rsm_memseg_import_put(FORGED, 0, msg, 4), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_memseg_import_put((rsm_memseg_import_handle_t)ex, 0, msg, 4), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_memseg_import_put(ro, 0, msg, 4), RSMERR_PERM_DENIED);
	CHECK(rsm_memseg_import_put32(im, 2, words, 1), RSMERR_MISALIGNED_OFFSET);
	CHECK(rsm_memseg_import_put32(im, 0, words, (ulong_t)-1), RSMERR_BAD_LENGTH);
	CHECK(rsm_memseg_import_get64(im, 0, NULL, 1), RSMERR_BAD_ADDR);

	CHECK(rsm_memseg_import_put(im, 0, msg, sizeof msg), RSM_SUCCESS);
	memset(buf, 0, sizeof buf);
	CHECK(rsm_memseg_import_get(ro, 0, buf, sizeof msg), RSM_SUCCESS);
	CHECK(strcmp(buf, msg), 0);
	CHECK(rsm_memseg_import_put32(im, 64, words, 4), RSM_SUCCESS);
	CHECK(rsm_memseg_import_get32(im, 64, back32, 4), RSM_SUCCESS);
	CHECK(memcmp(words, back32, sizeof words), 0);
	CHECK(rsm_memseg_import_put64(im, 128, &big, 1), RSM_SUCCESS);
	CHECK(rsm_memseg_import_get64(im, 128, &back64, 1), RSM_SUCCESS);
	CHECK(back64 == big, 1);
	CHECK(rsm_memseg_import_put16(im, 136, h16, 2), RSM_SUCCESS);
	CHECK(rsm_memseg_import_get16(im, 136, b16, 2), RSM_SUCCESS);
	CHECK(b16[0] == 0xbeef && b16[1] == 0xcafe, 1);
	CHECK(rsm_memseg_import_put8(im, 141, b8, 3), RSM_SUCCESS);
	CHECK(rsm_memseg_import_get8(im, 141, r8, 3), RSM_SUCCESS);
	CHECK(memcmp(b8, r8, 3), 0);

	/* Barrier mode and barriers. */
	CHECK(rsm_memseg_import_get_mode(im, &mode), RSM_SUCCESS);
	CHECK(mode, RSM_BARRIER_MODE_IMPLICIT);
	CHECK(rsm_memseg_import_get_mode(im, NULL), RSMERR_BAD_ADDR);
	CHECK(rsm_memseg_import_set_mode(im, (rsm_barrier_mode_t)7), RSMERR_BAD_MODE);
	CHECK(rsm_memseg_import_set_mode(im, RSM_BARRIER_MODE_EXPLICIT), RSM_SUCCESS);
	CHECK(rsm_memseg_import_init_barrier(im, RSM_BAR_DEFAULT, NULL), RSMERR_BAD_BARRIER_PTR);
	CHECK(rsm_memseg_import_init_barrier(FORGED, RSM_BAR_DEFAULT, &bar), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_memseg_import_open_barrier(NULL), RSMERR_BAD_BARRIER_PTR);
	memset(&zero_bar, 0, sizeof zero_bar);
	CHECK(rsm_memseg_import_open_barrier(&zero_bar), RSMERR_BARRIER_UNINITIALIZED);
	CHECK(rsm_memseg_import_init_barrier(im, RSM_BAR_DEFAULT, &bar), RSM_SUCCESS);
	CHECK(rsm_memseg_import_close_barrier(&bar), RSMERR_BARRIER_NOT_OPENED);
	CHECK(rsm_memseg_import_open_barrier(&bar), RSM_SUCCESS);
	CHECK(rsm_memseg_import_put(im, 256, msg, sizeof msg), RSM_SUCCESS);
	CHECK(rsm_memseg_import_order_barrier(&bar), RSM_SUCCESS);
	CHECK(rsm_memseg_import_close_barrier(&bar), RSM_SUCCESS);
	zero_bar = bar;
	zero_bar.privdata = FORGED;
	CHECK(rsm_memseg_import_open_barrier(&zero_bar), RSMERR_BAD_BARRIER_PTR);
	CHECK(rsm_memseg_import_destroy_barrier(&bar), RSM_SUCCESS);
	CHECK(rsm_memseg_import_open_barrier(&bar), RSMERR_BARRIER_UNINITIALIZED);
	CHECK(rsm_memseg_import_set_mode(im, RSM_BARRIER_MODE_IMPLICIT), RSM_SUCCESS);

	/* Scatter/gather and local memory handles. */
	CHECK(rsm_create_localmemory_handle(c, &lh, local, 0), RSMERR_BAD_LENGTH);
	CHECK(rsm_create_localmemory_handle(FORGED, &lh, local, 4096), RSMERR_BAD_CTLR_HNDL);
	CHECK(rsm_create_localmemory_handle(c, &lh, local, sizeof local), RSM_SUCCESS);
	CHECK(rsm_memseg_import_putv(NULL), RSMERR_BAD_SGIO);
	memset(&sg, 0, sizeof sg);
	memset(iov, 0, sizeof iov);
	sg.remote_handle = im;
	sg.iovec = iov;
	CHECK(rsm_memseg_import_putv(&sg), RSMERR_BAD_SGIO);
	sg.io_request_count = RSM_MAX_SGIOREQS + 1;
	CHECK(rsm_memseg_import_putv(&sg), RSMERR_BAD_SGIO);
	sg.io_request_count = 2;
	iov[0].io_type = 9;
	CHECK(rsm_memseg_import_putv(&sg), RSMERR_BAD_SGIO);
	CHECK(sg.io_residual_count, 2);
	memcpy(local, "gathered", 8);
	memcpy(local + 100, "-pieces", 7);
	iov[0].io_type = RSM_HANDLE_TYPE;
	iov[0].local.handle = (rsm_localmemory_handle_t)FORGED;
	iov[0].transfer_length = 8;
	iov[0].remote_offset = 512;
	iov[1].io_type = RSM_VA_TYPE;
	iov[1].local.vaddr = local + 100;
	iov[1].transfer_length = 7;
	iov[1].remote_offset = 520;
	CHECK(rsm_memseg_import_putv(&sg), RSMERR_BAD_LOCALMEM_HNDL);
	iov[0].local.handle = lh;
	iov[0].local_offset = sizeof local;
	CHECK(rsm_memseg_import_putv(&sg), RSMERR_BAD_LENGTH);
	iov[0].local_offset = 0;
	iov[1].remote_offset = 2 * page;
	CHECK(rsm_memseg_import_putv(&sg), RSMERR_BAD_OFFSET);
	CHECK(sg.io_residual_count, 1);
	iov[1].remote_offset = 2 * page - 4;
	CHECK(rsm_memseg_import_putv(&sg), RSMERR_BAD_LENGTH);
	CHECK(sg.io_residual_count, 1);
	iov[1].remote_offset = 520;
	CHECK(rsm_memseg_import_putv(&sg), RSM_SUCCESS);
	CHECK(sg.io_residual_count, 0);
	memset(buf, 0, sizeof buf);
	CHECK(rsm_memseg_import_get(im, 512, buf, 15), RSM_SUCCESS);
	CHECK(strcmp(buf, "gathered-pieces"), 0);
	memset(local, 0, 16);
	sg.remote_handle = ro;
	iov[1].io_type = RSM_HANDLE_TYPE;
	iov[1].local.handle = lh;
	iov[1].local_offset = 8;
	CHECK(rsm_memseg_import_getv(&sg), RSM_SUCCESS);
	CHECK(memcmp(local, "gathered-pieces", 15), 0);
	CHECK(rsm_free_localmemory_handle(c, lh), RSM_SUCCESS);
	CHECK(rsm_free_localmemory_handle(c, lh), RSMERR_BAD_LOCALMEM_HNDL);
	CHECK(rsm_memseg_import_getv(&sg), RSMERR_BAD_LOCALMEM_HNDL);

	/* Mapping. */
	CHECK(rsm_memseg_import_unmap(im), RSMERR_SEG_NOT_MAPPED);
	CHECK(rsm_memseg_import_map(im, NULL, RSM_MAP_NONE, RSM_PERM_RDWR, 0, page), RSMERR_BAD_ADDR);
	CHECK(rsm_memseg_import_map(im, &addr, RSM_MAP_FIXED, RSM_PERM_RDWR, 0, page), RSMERR_MAP_FAILED);
	CHECK(rsm_memseg_import_map(ro, &addr, RSM_MAP_NONE, RSM_PERM_RDWR, 0, page), RSMERR_PERM_DENIED);
	CHECK(rsm_memseg_import_map(im, &addr, RSM_MAP_NONE, RSM_PERM_RDWR, 0, 3 * page), RSMERR_BAD_LENGTH);
	CHECK(rsm_memseg_import_map(im, &addr, RSM_MAP_NONE, RSM_PERM_RDWR, 0, 2 * page), RSM_SUCCESS);
	CHECK(memcmp(addr, msg, sizeof msg), 0);
	CHECK(rsm_memseg_import_map(im, &addr, RSM_MAP_NONE, RSM_PERM_RDWR, 0, page), RSMERR_SEG_ALREADY_MAPPED);
	CHECK(rsm_memseg_import_disconnect(im), RSMERR_SEG_STILL_MAPPED);
	CHECK(rsm_memseg_import_unmap(im), RSM_SUCCESS);

	/* Signals. */
	CHECK(rsm_intr_signal_post(NULL, 0), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_intr_signal_post(c, 0), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_intr_signal_wait(FORGED, 0), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_intr_signal_wait(im, 0), RSMERR_TIMEOUT);
	CHECK(rsm_intr_signal_post(im, 0), RSM_SUCCESS);
	CHECK(rsm_intr_signal_wait(ex, 1000), RSM_SUCCESS);
	CHECK(rsm_intr_signal_wait(ex, 0), RSMERR_TIMEOUT);
	CHECK(rsm_memseg_get_pollfd(FORGED, NULL), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_intr_signal_wait_pollfd(NULL, 1, 0, NULL), RSMERR_BAD_ARGS_ERRORS);

	/* Segment id ranges (the test's file reserves "myrix-test" 0x80001000, 64 ids). */
	CHECK(rsm_get_segmentid_range(NULL, &id, &len32), RSMERR_BAD_ADDR);
	CHECK(rsm_get_segmentid_range("nobody", &id, &len32), RSMERR_BAD_APPID);
	CHECK(rsm_get_segmentid_range("myrix-test", &id, &len32), RSM_SUCCESS);
	CHECK(id == 0x80001000u && len32 == 64, 1);
	setenv("MYRIX_RSM_SEGMENTID_FILE", "/nonexistent/rsm.segmentid", 1);
	CHECK(rsm_get_segmentid_range("myrix-test", &id, &len32), RSMERR_BAD_CONF);

	/* Unpublish: importers' later accesses are aborted. */
	CHECK(rsm_memseg_export_unpublish(ex), RSM_SUCCESS);
	CHECK(rsm_memseg_import_put(im, 0, msg, 4), RSMERR_CONN_ABORTED);
	CHECK(rsm_memseg_import_get(ro, 0, buf, 4), RSMERR_CONN_ABORTED);

	/* Clean-up; every handle is dead afterwards. */
	CHECK(rsm_memseg_import_disconnect(im), RSM_SUCCESS);
	CHECK(rsm_memseg_import_disconnect(im), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_memseg_import_get(im, 0, buf, 4), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_memseg_import_disconnect(ro), RSM_SUCCESS);
	CHECK(rsm_memseg_export_destroy(ex), RSM_SUCCESS);
	CHECK(rsm_memseg_export_destroy(ex), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_intr_signal_post(ex, 0), RSMERR_BAD_SEG_HNDL);
	CHECK(rsm_release_controller(c), RSM_SUCCESS);

	printf("errors: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
