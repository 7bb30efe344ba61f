/* The bare line ping-pong of bench/shm_floor.c in variants closer to a postbox, to see
 * what the line transfers cost apart from any library (docs/mpi-p2p.md, session 31).
 * Two processes share one anonymous mapping; each writes the other's line and
 * spin-polls its own. Prints the one-way latency (half the round trip) in us.
 *   gcc -O2 -o shm_floor_ring bench/shm_floor_ring.c && ./shm_floor_ring MODE [ITERS]
 * MODE is a sum of:
 *   1  CLDEMOTE the line after writing it (a NOP where the CPU lacks it)
 *   2  a ring of 64 lines each way, message i in line i % 64 (as the postbox queue)
 *      instead of one line each way
 *   4  a pause (x86 `pause`) after every empty poll
 *   8  write 56 bytes of body before the flag word and read them after it (a short
 *      message's postbox) instead of the flag word alone
 * Never yields: run it on an otherwise idle pair of cores. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define Q 64
static int mode;

static void demote(void *p) {
#if defined(__x86_64__)
	__asm__ volatile(".byte 0x0f,0x1c,0x07" ::"D"(p) : "memory"); /* cldemote (%rdi) */
#else
	(void)p;
#endif
}

static void relax(void) {
#if defined(__x86_64__)
	__builtin_ia32_pause();
#endif
}

static void post(uint64_t *line, uint64_t v) {
	if (mode & 8) {
		volatile uint64_t *l = line;
		for (int k = 1; k < 8; k++)
			l[k] = v + (uint64_t)k;
	}
	atomic_store_explicit((_Atomic uint64_t *)line, v, memory_order_release);
	if (mode & 1)
		demote(line);
}

static void wait_for(uint64_t *line, uint64_t v) {
	while (atomic_load_explicit((_Atomic uint64_t *)line, memory_order_acquire) != v)
		if (mode & 4)
			relax();
	if (mode & 8) {
		volatile uint64_t *l = line;
		for (int k = 1; k < 8; k++)
			if (l[k] != v + (uint64_t)k) {
				fprintf(stderr, "shm_floor_ring: body seen before its flag\n");
				exit(1);
			}
	}
}

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: shm_floor_ring MODE [ITERS]\n");
		return 2;
	}
	mode = atoi(argv[1]);
	long iters = argc > 2 ? atol(argv[2]) : 200000;
	long warm = iters / 10;
	uint64_t *m = mmap(NULL, 2 * Q * 64, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || iters < 1)
		return 1;
	uint64_t *ping = m, *pong = m + Q * 8;
	long q = (mode & 2) ? Q : 1;
	pid_t child = fork();
	if (child == 0) {
		for (long i = 1; i <= iters + warm; i++) {
			wait_for(ping + (i % q) * 8, (uint64_t)i);
			post(pong + (i % q) * 8, (uint64_t)i);
		}
		_exit(0);
	}
	struct timespec a, b;
	for (long i = 1; i <= iters + warm; i++) {
		if (i == warm + 1)
			clock_gettime(CLOCK_MONOTONIC, &a);
		post(ping + (i % q) * 8, (uint64_t)i);
		wait_for(pong + (i % q) * 8, (uint64_t)i);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	waitpid(child, NULL, 0);
	double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iters;
	printf("mode %d: %.3f\n", mode, ns / 2 / 1000);
	return 0;
}
