/* Bare raw-Ethernet ping-pong with spin-polling: an AF_PACKET datagram socket for
 * EtherType 0x86DF (Open-MX's), the floor for any layer over raw Ethernet. Needs root.
 * Server: eth_pingpong -s IFNAME [FRAMES]; client: eth_pingpong -c IFNAME SERVER_MAC LEN
 * ITERATIONS [FRAMES]. The first payload byte is 1 in the client's last frame, which
 * stops the server. Prints "length latency_us". FRAMES (default 1, both sides the
 * same): each ping and pong is that many frames, sent back to back, the answer sent
 * once all have arrived (a write and its flag as two datagrams). */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ETHERTYPE_MX 0x86DF

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int parse_mac(const char *s, unsigned char *mac) {
    unsigned v[6];
    if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
        return -1;
    for (int i = 0; i < 6; i++) mac[i] = (unsigned char)v[i];
    return 0;
}

/* Receives one frame that came in (not one of ours going out); returns its length. */
static ssize_t recv_in(int s, char *buf, size_t cap, struct sockaddr_ll *from) {
    for (;;) {
        socklen_t fl = sizeof *from;
        ssize_t n = recvfrom(s, buf, cap, MSG_DONTWAIT, (struct sockaddr *)from, &fl);
        if (n >= 0 && from->sll_pkttype != PACKET_OUTGOING) return n;
    }
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int s = socket(AF_PACKET, SOCK_DGRAM, htons(ETHERTYPE_MX));
    if (s < 0) {
        perror("socket");
        return 1;
    }
    struct sockaddr_ll me = {.sll_family = AF_PACKET, .sll_protocol = htons(ETHERTYPE_MX)};
    me.sll_ifindex = (int)if_nametoindex(argv[2]);
    if (me.sll_ifindex == 0 || bind(s, (struct sockaddr *)&me, sizeof me) < 0) {
        perror(argv[2]);
        return 1;
    }
    /* Our own frames leaving are not wanted (as in MX's eth transport): without this
     * the kernel clones each to the socket and recv_in spends a receive on it. */
    int one = 1;
    setsockopt(s, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    char buf[9000];
    struct sockaddr_ll from;
    if (!strcmp(argv[1], "-s")) {
        int frames = argc > 3 ? atoi(argv[3]) : 1;
        if (frames < 1) frames = 1;
        for (;;) {
            ssize_t n = 0;
            for (int f = 0; f < frames; f++) {
                n = recv_in(s, buf, sizeof buf, &from);
                if (n > 0 && buf[0] == 1) return 0;
            }
            from.sll_protocol = htons(ETHERTYPE_MX);
            for (int f = 0; f < frames; f++)
                sendto(s, buf, (size_t)n, 0, (struct sockaddr *)&from, sizeof from);
        }
    }
    if (argc < 4) return 2;
    struct sockaddr_ll to = me;
    to.sll_halen = 6;
    if (parse_mac(argv[3], to.sll_addr) < 0) {
        fprintf(stderr, "bad MAC address %s\n", argv[3]);
        return 2;
    }
    int len = argc > 4 ? atoi(argv[4]) : 8, iters = argc > 5 ? atoi(argv[5]) : 100000;
    int frames = argc > 6 ? atoi(argv[6]) : 1;
    if (frames < 1) frames = 1;
    if (len < 1) len = 1;
    if (len > (int)sizeof buf) len = sizeof buf;
    memset(buf, 0, sizeof buf);
    double t0 = 0;
    for (int i = 0; i < iters + iters / 10; i++) {
        if (i == iters / 10) t0 = now();
        for (int f = 0; f < frames; f++)
            sendto(s, buf, (size_t)len, 0, (struct sockaddr *)&to, sizeof to);
        for (int f = 0; f < frames; f++) recv_in(s, buf, sizeof buf, &from);
        buf[0] = 0;
    }
    printf("%d %.4f\n", len, (now() - t0) / iters / 2 * 1e6);
    buf[0] = 1;
    sendto(s, buf, (size_t)len, 0, (struct sockaddr *)&to, sizeof to);
    return 0;
}
