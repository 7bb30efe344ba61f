/* Bare UDP ping-pong with spin-polling (non-blocking recv in a loop), the floor for any
 * UDP message layer. Server: udp_pingpong -s BIND_IP PORT; client: udp_pingpong -c
 * SERVER_IP PORT LEN ITERATIONS. Prints "length latency_us". */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[3]))};
    inet_pton(AF_INET, argv[2], &a.sin_addr);
    char buf[65536];
    if (!strcmp(argv[1], "-s")) {
        bind(s, (struct sockaddr *)&a, sizeof a);
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        for (;;) {
            ssize_t n = recvfrom(s, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
            if (n < 0) continue;
            if (n == 0) return 0; /* empty datagram: stop */
            sendto(s, buf, n, 0, (struct sockaddr *)&from, fl);
        }
    }
    int len = argc > 4 ? atoi(argv[4]) : 8, iters = argc > 5 ? atoi(argv[5]) : 100000;
    if (len < 1) len = 1;
    double t0 = 0;
    for (int i = 0; i < iters + iters / 10; i++) {
        if (i == iters / 10) t0 = now();
        sendto(s, buf, len, 0, (struct sockaddr *)&a, sizeof a);
        while (recv(s, buf, sizeof buf, MSG_DONTWAIT) < 0) {}
    }
    printf("%d %.4f\n", len, (now() - t0) / iters / 2 * 1e6);
    sendto(s, buf, 0, 0, (struct sockaddr *)&a, sizeof a);
    return 0;
}
