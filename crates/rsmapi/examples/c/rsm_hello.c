/*
 * rsm_hello: an exporter and an importer in two processes, with RSMAPI only (plus
 * POSIX), so it builds unchanged against Solaris/illumos librsm (-lrsm) or myrix's
 * librsmapi:
 *
 *   cc rsm_hello.c $(PKG_CONFIG_PATH=target/release/pkgconfig pkg-config --cflags --libs rsmapi)
 *
 * The parent exports one page and publishes it with an access list naming its own
 * node; the segment id goes to the child through a pipe (the "out-of-band" channel
 * RSMAPI expects). The child imports it, writes a message and a counter under an
 * explicit barrier, and signals the exporter; the parent checks its memory, writes a
 * reply and signals back; the child reads the reply. Both clean up.
 * Usage: rsm_hello [controller]   (default "loopback")
 */
#define _POSIX_C_SOURCE 200809L
#include <rsmapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSG_OFF 0
#define COUNT_OFF 64
#define REPLY_OFF 256
#define WAIT_MS 10000

static const char greeting[] = "hello from the importer";
static const char reply[] = "hello back from the exporter";

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

static int importer(const char *ctlr_name, rsm_node_id_t node, rsm_memseg_id_t segid)
{
	rsmapi_controller_handle_t ctlr;
	rsm_memseg_import_handle_t im;
	rsmapi_barrier_t bar;
	uint32_t counts[4] = { 1, 2, 3, 4 };
	char back[sizeof reply];

	TRY("importer", rsm_get_controller((char *)ctlr_name, &ctlr));
	TRY("importer", rsm_memseg_import_connect(ctlr, node, segid, RSM_PERM_RDWR, &im));
	printf("importer: connected to segment %#x of node %u\n", (unsigned)segid, (unsigned)node);

	TRY("importer", rsm_memseg_import_set_mode(im, RSM_BARRIER_MODE_EXPLICIT));
	TRY("importer", rsm_memseg_import_init_barrier(im, RSM_BAR_DEFAULT, &bar));
	TRY("importer", rsm_memseg_import_open_barrier(&bar));
	TRY("importer", rsm_memseg_import_put(im, MSG_OFF, (void *)greeting, sizeof greeting));
	TRY("importer", rsm_memseg_import_put32(im, COUNT_OFF, counts, 4));
	TRY("importer", rsm_memseg_import_close_barrier(&bar));
	TRY("importer", rsm_memseg_import_destroy_barrier(&bar));
	printf("importer: put %zu bytes and 4 words, barrier closed\n", sizeof greeting);

	TRY("importer", rsm_intr_signal_post(im, 0));
	TRY("importer", rsm_intr_signal_wait(im, WAIT_MS));
	TRY("importer", rsm_memseg_import_get(im, REPLY_OFF, back, sizeof back));
	if (memcmp(back, reply, sizeof reply) != 0) {
		printf("importer: got the wrong reply\n");
		return 1;
	}
	printf("importer: got \"%s\"\n", back);

	TRY("importer", rsm_memseg_import_disconnect(im));
	TRY("importer", rsm_release_controller(ctlr));
	return 0;
}

int main(int argc, char **argv)
{
	const char *ctlr_name = argc > 1 ? argv[1] : "loopback";
	rsmapi_controller_handle_t ctlr;
	rsmapi_controller_attr_t attr;
	rsm_topology_t *topo;
	rsm_memseg_export_handle_t ex;
	rsmapi_access_entry_t acl[1];
	rsm_memseg_id_t segid = 0;
	rsm_node_id_t node;
	uint32_t counts[4];
	char *mem;
	size_t len;
	int pipefd[2], status, child_failed;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(pipefd) != 0) {
		perror("pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		/* The importer learns the node and segment id from the exporter. */
		uint32_t ids[2];
		close(pipefd[1]);
		if (read(pipefd[0], ids, sizeof ids) != (ssize_t)sizeof ids) {
			printf("importer: no segment id from the exporter\n");
			exit(1);
		}
		exit(importer(ctlr_name, ids[0], ids[1]));
	}
	close(pipefd[0]);

	TRY("exporter", rsm_get_controller((char *)ctlr_name, &ctlr));
	TRY("exporter", rsm_get_controller_attr(ctlr, &attr));
	TRY("exporter", rsm_get_interconnect_topology(&topo));
	node = topo->topology_hdr.local_nodeid;
	printf("exporter: controller %s, node %u, page size %zu\n", ctlr_name, (unsigned)node,
	    (size_t)attr.attr_page_size);
	rsm_free_interconnect_topology(topo);

	len = attr.attr_page_size;
	if (posix_memalign((void **)&mem, len, len) != 0) {
		printf("exporter: no memory\n");
		return 1;
	}
	memset(mem, 0, len);
	TRY("exporter", rsm_memseg_export_create(ctlr, &ex, mem, len, 0));
	acl[0].ae_node = node;
	acl[0].ae_permission = RSM_PERM_RDWR;
	TRY("exporter", rsm_memseg_export_publish(ex, &segid, acl, 1));
	printf("exporter: published %zu bytes as segment %#x to node %u (rw)\n", len,
	    (unsigned)segid, (unsigned)node);
	{
		uint32_t ids[2] = { node, segid };
		if (write(pipefd[1], ids, sizeof ids) != (ssize_t)sizeof ids) {
			perror("write");
			return 1;
		}
	}

	TRY("exporter", rsm_intr_signal_wait(ex, WAIT_MS));
	memcpy(counts, mem + COUNT_OFF, sizeof counts);
	if (memcmp(mem + MSG_OFF, greeting, sizeof greeting) != 0 || counts[0] != 1 ||
	    counts[3] != 4) {
		printf("exporter: the segment does not hold what the importer put\n");
		return 1;
	}
	printf("exporter: signalled; segment holds \"%s\" and %u %u %u %u\n", mem + MSG_OFF,
	    (unsigned)counts[0], (unsigned)counts[1], (unsigned)counts[2], (unsigned)counts[3]);
	memcpy(mem + REPLY_OFF, reply, sizeof reply);
	TRY("exporter", rsm_intr_signal_post(ex, 0));

	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	child_failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	TRY("exporter", rsm_memseg_export_unpublish(ex));
	TRY("exporter", rsm_memseg_export_destroy(ex));
	TRY("exporter", rsm_release_controller(ctlr));
	free(mem);
	if (child_failed) {
		printf("exporter: the importer failed\n");
		return 1;
	}
	printf("rsm_hello: done\n");
	return 0;
}
