/*
 * rsm_pair: an exporter and an importer as two separate programs on two nodes of a
 * network controller ("udp" or "eth"), with RSMAPI only (plus POSIX stdio), so it
 * builds unchanged against illumos librsm or myrix's librsmapi:
 *
 *   cc rsm_pair.c $(PKG_CONFIG_PATH=target/release/pkgconfig pkg-config --cflags --libs rsmapi)
 *
 * Each side names its node in the node table (MYRIX_RSM_NODES, MYRIX_RSM_NODE:
 * docs/rsm-net.md); the segment id goes from the exporter's output to the importer's
 * command line (RSMAPI's "out-of-band" channel).
 *
 *   rsm_pair export CTLR IMPORTER_NODE       prints "segment 0x..." and serves it
 *   rsm_pair import CTLR EXPORTER_NODE SEGID
 *
 * The exporter publishes 256 KiB to the importer's node only. The importer, under an
 * explicit barrier, puts 192 KiB of a pattern (many frames: pipelined), 64 32-bit words
 * with one call (a repeat count) and a scatter list of four pieces, closes the barrier
 * and signals; the exporter checks every byte in its own memory, writes a reply and
 * signals back; the importer gets the reply and checks it, then says it is done with a
 * last signal so the exporter does not unpublish under it.
 */
#define _POSIX_C_SOURCE 200809L
#include <rsmapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEG_LEN (256 * 1024)
#define BULK_LEN (192 * 1024)
#define WORDS_OFF BULK_LEN
#define NWORDS 64
#define SG_OFF (WORDS_OFF + 4 * NWORDS)
#define SG_PIECES 4
#define SG_PIECE 100
#define REPLY_OFF (SG_OFF + 4096)
#define REPLY_LEN 8192
/* Generous: the link loses, duplicates and reorders frames. */
#define WAIT_MS 30000

static unsigned char pattern(size_t k, unsigned seed)
{
	return (unsigned char)((k * 2654435761u + seed) >> 7);
}

static int fail(const char *who, const char *what, int err)
{
	printf("%s: %s failed: error %d\n", who, what, err);
	return 1;
}

#define TRY(who, call)                                  \
	do {                                            \
		int e_ = (call);                        \
		if (e_ != RSM_SUCCESS)                  \
			return fail(who, #call, e_);    \
	} while (0)

/* Reads a node id or segment id (decimal or 0x-hex); 0 and garbage are refused. */
static int number(const char *s, unsigned long *out)
{
	char *end;
	*out = strtoul(s, &end, 0);
	return *s != '\0' && *end == '\0' && *out != 0 && *out <= 0xffffffffUL;
}

static int exporter(const char *ctlr_name, rsm_node_id_t peer)
{
	rsmapi_controller_handle_t ctlr;
	rsm_memseg_export_handle_t ex;
	rsmapi_access_entry_t acl[1];
	rsm_memseg_id_t segid = 0;
	unsigned char *mem;
	uint32_t w;
	size_t k, p;

	TRY("exporter", rsm_get_controller((char *)ctlr_name, &ctlr));
	if (posix_memalign((void **)&mem, 4096, SEG_LEN) != 0) {
		printf("exporter: no memory\n");
		return 1;
	}
	memset(mem, 0, SEG_LEN);
	TRY("exporter", rsm_memseg_export_create(ctlr, &ex, mem, SEG_LEN, 0));
	acl[0].ae_node = peer;
	acl[0].ae_permission = RSM_PERM_RDWR;
	TRY("exporter", rsm_memseg_export_publish(ex, &segid, acl, 1));
	printf("segment %#x\n", (unsigned)segid);

	TRY("exporter", rsm_intr_signal_wait(ex, WAIT_MS));
	for (k = 0; k < BULK_LEN; k++)
		if (mem[k] != pattern(k, 1)) {
			printf("exporter: bulk byte %zu differs\n", k);
			return 1;
		}
	for (k = 0; k < NWORDS; k++) {
		memcpy(&w, mem + WORDS_OFF + 4 * k, 4);
		if (w != 1000 + k) {
			printf("exporter: word %zu is %u\n", k, (unsigned)w);
			return 1;
		}
	}
	for (p = 0; p < SG_PIECES; p++)
		for (k = 0; k < SG_PIECE; k++)
			if (mem[SG_OFF + p * 1000 + k] != pattern(k, 10 + (unsigned)p)) {
				printf("exporter: scatter piece %zu differs at %zu\n", p, k);
				return 1;
			}
	printf("exporter: %d bytes, %d words and %d pieces verified\n", BULK_LEN, NWORDS,
	    SG_PIECES);
	for (k = 0; k < REPLY_LEN; k++)
		mem[REPLY_OFF + k] = pattern(k, 2);
	TRY("exporter", rsm_intr_signal_post(ex, 0));
	TRY("exporter", rsm_intr_signal_wait(ex, WAIT_MS));
	TRY("exporter", rsm_memseg_export_unpublish(ex));
	TRY("exporter", rsm_memseg_export_destroy(ex));
	TRY("exporter", rsm_release_controller(ctlr));
	free(mem);
	printf("exporter: done\n");
	return 0;
}

static int importer(const char *ctlr_name, rsm_node_id_t node, rsm_memseg_id_t segid)
{
	static unsigned char bulk[BULK_LEN], back[REPLY_LEN], pieces[SG_PIECES][SG_PIECE];
	rsmapi_controller_handle_t ctlr;
	rsm_memseg_import_handle_t im;
	rsmapi_barrier_t bar;
	rsm_scat_gath_t sg;
	rsm_iovec_t iov[SG_PIECES];
	uint32_t words[NWORDS];
	size_t k, p;

	for (k = 0; k < BULK_LEN; k++)
		bulk[k] = pattern(k, 1);
	for (k = 0; k < NWORDS; k++)
		words[k] = 1000 + (uint32_t)k;
	TRY("importer", rsm_get_controller((char *)ctlr_name, &ctlr));
	TRY("importer", rsm_memseg_import_connect(ctlr, node, segid, RSM_PERM_RDWR, &im));
	printf("importer: connected to segment %#x of node %u\n", (unsigned)segid, (unsigned)node);

	memset(&sg, 0, sizeof sg);
	sg.io_request_count = SG_PIECES;
	sg.remote_handle = im;
	sg.iovec = iov;
	for (p = 0; p < SG_PIECES; p++) {
		for (k = 0; k < SG_PIECE; k++)
			pieces[p][k] = pattern(k, 10 + (unsigned)p);
		iov[p].io_type = RSM_VA_TYPE;
		iov[p].local.vaddr = (caddr_t)pieces[p];
		iov[p].local_offset = 0;
		iov[p].remote_offset = SG_OFF + p * 1000;
		iov[p].transfer_length = SG_PIECE;
	}

	TRY("importer", rsm_memseg_import_set_mode(im, RSM_BARRIER_MODE_EXPLICIT));
	TRY("importer", rsm_memseg_import_init_barrier(im, RSM_BAR_DEFAULT, &bar));
	TRY("importer", rsm_memseg_import_open_barrier(&bar));
	TRY("importer", rsm_memseg_import_put(im, 0, bulk, BULK_LEN));
	TRY("importer", rsm_memseg_import_put32(im, WORDS_OFF, words, NWORDS));
	TRY("importer", rsm_memseg_import_putv(&sg));
	TRY("importer", rsm_memseg_import_close_barrier(&bar));
	TRY("importer", rsm_memseg_import_destroy_barrier(&bar));
	printf("importer: put %d bytes, %d words and %d pieces, barrier closed\n", BULK_LEN,
	    NWORDS, SG_PIECES);

	TRY("importer", rsm_intr_signal_post(im, 0));
	TRY("importer", rsm_intr_signal_wait(im, WAIT_MS));
	TRY("importer", rsm_memseg_import_get(im, REPLY_OFF, back, REPLY_LEN));
	for (k = 0; k < REPLY_LEN; k++)
		if (back[k] != pattern(k, 2)) {
			printf("importer: reply byte %zu differs\n", k);
			return 1;
		}
	printf("importer: got the %d-byte reply\n", REPLY_LEN);
	TRY("importer", rsm_intr_signal_post(im, 0));
	TRY("importer", rsm_memseg_import_disconnect(im));
	TRY("importer", rsm_release_controller(ctlr));
	printf("importer: done\n");
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long node, segid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "export") == 0 && number(argv[3], &node))
		return exporter(argv[2], (rsm_node_id_t)node);
	if (argc == 5 && strcmp(argv[1], "import") == 0 && number(argv[3], &node) &&
	    number(argv[4], &segid))
		return importer(argv[2], (rsm_node_id_t)node, (rsm_memseg_id_t)segid);
	fprintf(stderr, "usage: rsm_pair export CTLR IMPORTER_NODE\n"
			"       rsm_pair import CTLR EXPORTER_NODE SEGID\n");
	return 2;
}
