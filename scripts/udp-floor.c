// The UDP counterpart of loopback-floor.c: what one small datagram on loopback costs the
// sending core when nothing else runs in user space, with sendmmsg batching the system calls.
// One sender thread on core 0 sends MSG-byte datagrams round-robin to N receiving sockets in
// batches of B per sendmmsg; a reader process on core 1 drains every socket with epoll and
// recvmmsg. Prints datagrams/s and the sender's system CPU per datagram. Datagrams the reader
// could not take in time are dropped by the kernel after the sender paid for them, as a game
// server's would be.
// Build and run: cc -O2 -o /tmp/udp-floor scripts/udp-floor.c
//                /tmp/udp-floor 8000 40 5 16      (sockets, bytes, seconds, batch)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void pin(int core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static double seconds_of(struct timeval t) { return t.tv_sec + t.tv_usec / 1e6; }

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 8000;
    int size = argc > 2 ? atoi(argv[2]) : 40;
    double seconds = argc > 3 ? atof(argv[3]) : 5;
    int batch = argc > 4 ? atoi(argv[4]) : 16;
    if (n < 1 || size < 1 || size > 1400 || batch < 1 || batch > 1024) {
        fprintf(stderr, "usage: udp-floor SOCKETS BYTES(1-1400) SECONDS BATCH(1-1024)\n");
        return 2;
    }
    int *receivers = malloc(n * sizeof(int));
    struct sockaddr_in *addresses = malloc(n * sizeof *addresses);
    for (int i = 0; i < n; i++) {
        receivers[i] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t length = sizeof address;
        if (receivers[i] < 0 || bind(receivers[i], (struct sockaddr *)&address, sizeof address) != 0) {
            perror("socket/bind (raise ulimit -n?)");
            return 1;
        }
        getsockname(receivers[i], (struct sockaddr *)&address, &length);
        addresses[i] = address;
    }
    pid_t child = fork();
    if (child == 0) {  // the reader, on core 1
        pin(1);
        int poll = epoll_create1(0);
        for (int i = 0; i < n; i++) {
            struct epoll_event event = {.events = EPOLLIN, .data.fd = receivers[i]};
            epoll_ctl(poll, EPOLL_CTL_ADD, receivers[i], &event);
        }
        struct epoll_event events[256];
        struct mmsghdr messages[64];
        struct iovec vectors[64];
        static char buffers[64][1500];
        for (int j = 0; j < 64; j++) {
            vectors[j] = (struct iovec){.iov_base = buffers[j], .iov_len = sizeof buffers[j]};
            memset(&messages[j], 0, sizeof messages[j]);
            messages[j].msg_hdr.msg_iov = &vectors[j];
            messages[j].msg_hdr.msg_iovlen = 1;
        }
        for (;;) {
            int ready = epoll_wait(poll, events, 256, 1000);
            for (int i = 0; i < ready; i++) {
                while (recvmmsg(events[i].data.fd, messages, 64, MSG_DONTWAIT, NULL) > 0) {}
            }
        }
    }
    pin(0);
    int sender = socket(AF_INET, SOCK_DGRAM, 0);
    struct mmsghdr *messages = calloc(batch, sizeof *messages);
    char payload[1400];
    memset(payload, 'x', sizeof payload);
    struct iovec vector = {.iov_base = payload, .iov_len = size};
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    double start = now();
    long sent = 0;
    int next = 0;
    while (now() - start < seconds) {
        for (int j = 0; j < batch; j++) {
            messages[j].msg_hdr.msg_name = &addresses[next];
            messages[j].msg_hdr.msg_namelen = sizeof addresses[0];
            messages[j].msg_hdr.msg_iov = &vector;
            messages[j].msg_hdr.msg_iovlen = 1;
            next = (next + 1) % n;
        }
        int result = sendmmsg(sender, messages, batch, 0);
        if (result > 0) sent += result;
    }
    double elapsed = now() - start;
    getrusage(RUSAGE_SELF, &after);
    double system = seconds_of(after.ru_stime) - seconds_of(before.ru_stime);
    double user = seconds_of(after.ru_utime) - seconds_of(before.ru_utime);
    printf("%d sockets, %d bytes, batches of %d: %.0f datagrams/s on one core, %.2f us system CPU per datagram"
           " (user %.2f us)\n", n, size, batch, sent / elapsed, system * 1e6 / sent, user * 1e6 / sent);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 0;
}
