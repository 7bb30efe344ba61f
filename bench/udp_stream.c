/* Bare UDP stream, the ceiling for a UDP message layer's bandwidth: the sender blasts
 * datagrams with no flow control, the receiver counts what arrives.
 *   receiver: udp_stream -r BIND_IP PORT
 *   sender:   udp_stream -s RECEIVER_IP PORT MESSAGE_BYTES COUNT [DATAGRAM_BYTES]
 * The sender sends COUNT messages of MESSAGE_BYTES, each cut into datagrams of
 * DATAGRAM_BYTES (default 1472, the UDP payload of a 1500-byte Ethernet MTU, as MX over
 * UDP uses), then empty datagrams to say it is done. The receiver prints
 * "received_bytes seconds MB_per_s lost_percent", timed from the first datagram to the
 * end mark. Loss is what the kernel dropped: a message layer must resend it. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
    int big = 8 << 20;
    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    setsockopt(s, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[3]))};
    if (inet_pton(AF_INET, argv[2], &a.sin_addr) != 1) return 2;
    static char buf[65536];
    if (!strcmp(argv[1], "-r")) {
        if (bind(s, (struct sockaddr *)&a, sizeof a) < 0) return 1;
        long long got = 0, expect = 0;
        double t0 = 0;
        for (;;) {
            ssize_t n = recv(s, buf, sizeof buf, 0);
            if (n < 0) continue;
            if (n == 0) break;
            if (got == 0) {
                t0 = now();
                memcpy(&expect, buf, sizeof expect);
            }
            got += n;
        }
        double dt = now() - t0;
        printf("%lld %.6f %.1f %.2f\n", got, dt, got / dt / 1e6,
               expect > 0 ? 100.0 * (1.0 - (double)got / expect) : 0.0);
        return 0;
    }
    if (argc < 6) return 2;
    long long msg = atoll(argv[4]), count = atoll(argv[5]);
    int dgram = argc > 6 ? atoi(argv[6]) : 1472;
    if (msg < 1 || count < 1 || dgram < 16 || dgram > 65507) return 2;
    long long total = msg * count;
    memset(buf, 0x5a, sizeof buf);
    memcpy(buf, &total, sizeof total); /* the first datagram tells the receiver the total */
    for (long long m = 0; m < count; m++)
        for (long long off = 0; off < msg; off += dgram) {
            int n = msg - off < dgram ? (int)(msg - off) : dgram;
            while (sendto(s, buf, n, 0, (struct sockaddr *)&a, sizeof a) < 0) {}
        }
    for (int i = 0; i < 100; i++) {
        sendto(s, buf, 0, 0, (struct sockaddr *)&a, sizeof a);
        usleep(100);
    }
    return 0;
}
