/* The machine's floor for a one-sided ping-pong: two processes share one anonymous
 * mapping; each writes a sequence number into the other's cache line with an atomic
 * store and spin-polls its own. Prints the one-way latency (half the round trip) in us.
 *   gcc -O2 -o shm_floor bench/shm_floor.c && ./shm_floor [ITERS]
 * Polls yield the core when the machine has fewer cores than busy processes, as
 * myrix's waits do (sched_yield every poll in that case). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int oversubscribed(void) {
	FILE *f = fopen("/proc/loadavg", "r");
	int running = 0;
	if (f) {
		if (fscanf(f, "%*f %*f %*f %d", &running) != 1)
			running = 0;
		fclose(f);
	}
	return running > sysconf(_SC_NPROCESSORS_ONLN);
}

static void wait_for(_Atomic uint64_t *w, uint64_t v, int yield) {
	while (atomic_load_explicit(w, memory_order_acquire) != v)
		if (yield)
			sched_yield();
}

int main(int argc, char **argv) {
	long iters = argc > 1 ? atol(argv[1]) : 200000;
	long warm = iters / 10;
	_Atomic uint64_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || iters < 1)
		return 1;
	_Atomic uint64_t *ping = &m[0], *pong = &m[64];
	int yield = oversubscribed();
	pid_t child = fork();
	if (child == 0) {
		for (long i = 1; i <= iters + warm; i++) {
			wait_for(ping, (uint64_t)i, yield);
			atomic_store_explicit(pong, (uint64_t)i, memory_order_release);
		}
		_exit(0);
	}
	struct timespec a, b;
	for (long i = 1; i <= iters + warm; i++) {
		if (i == warm + 1)
			clock_gettime(CLOCK_MONOTONIC, &a);
		atomic_store_explicit(ping, (uint64_t)i, memory_order_release);
		wait_for(pong, (uint64_t)i, yield);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	waitpid(child, NULL, 0);
	double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iters;
	printf("%.3f\n", ns / 2 / 1000);
	return 0;
}
