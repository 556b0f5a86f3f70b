// The kernel's floor for one server core on this machine: how much CPU one small TCP write
// on loopback costs the writing core (send path plus, on loopback, the receive path, which
// runs on the sender's core), with nothing but write() in user space. One writer thread
// (pin it with taskset) writes MSG-byte messages round-robin to N connections; a reader
// process on the other core drains them with epoll. Prints writes/s and CPU µs per write.
// With "udp" as the fourth argument it measures datagrams instead: the sender sends to N bound
// UDP sockets round-robin with sendmmsg, BATCH datagrams per call (the system calls batched, as
// NIO does for datagram channels), and the reader drains them with recvmmsg. Datagrams the
// reader could not take in time are dropped after the sender paid for them, as a server's are.
// Build and run: cc -O2 -o /tmp/loopback-floor scripts/loopback-floor.c
//                /tmp/loopback-floor 1600 40 5          (TCP: connections, bytes, seconds)
//                /tmp/loopback-floor 8000 40 5 udp 16   (UDP: sockets, bytes, seconds, udp, batch)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/time.h>
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


static double cpu_seconds(struct rusage before, struct rusage after) {
    return (after.ru_utime.tv_sec - before.ru_utime.tv_sec) + (after.ru_utime.tv_usec - before.ru_utime.tv_usec) / 1e6
        + (after.ru_stime.tv_sec - before.ru_stime.tv_sec) + (after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6;
}

// Drains every socket in `fds` forever, on core 1: with read() for TCP, recvmmsg() for UDP.
static void drain(int *fds, int n, int datagrams) {
    pin(1);
    int poll = epoll_create1(0);
    for (int i = 0; i < n; i++) {
        struct epoll_event event = {.events = EPOLLIN, .data.fd = fds[i]};
        epoll_ctl(poll, EPOLL_CTL_ADD, fds[i], &event);
    }
    struct epoll_event events[256];
    static char buffers[64][1500];
    struct mmsghdr messages[64];
    struct iovec vectors[64];
    for (int j = 0; j < 64; j++) {
        vectors[j] = (struct iovec){.iov_base = buffers[j], .iov_len = sizeof buffers[j]};
        memset(&messages[j], 0, sizeof messages[j]);
        messages[j].msg_hdr.msg_iov = &vectors[j];
        messages[j].msg_hdr.msg_iovlen = 1;
    }
    for (;;) {
        int ready = epoll_wait(poll, events, 256, -1);
        for (int i = 0; i < ready; i++) {
            if (datagrams) {
                while (recvmmsg(events[i].data.fd, messages, 64, MSG_DONTWAIT, NULL) > 0) {}
            } else {
                read(events[i].data.fd, buffers, sizeof buffers);
            }
        }
    }
}

static int udp_floor(int n, int size, double seconds, int batch) {
    int *receivers = malloc(n * sizeof(int));
    struct sockaddr_in *addresses = malloc(n * sizeof *addresses);
    for (int i = 0; i < n; i++) {
        struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t length = sizeof address;
        receivers[i] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        if (receivers[i] < 0 || bind(receivers[i], (struct sockaddr *)&address, sizeof address) != 0) {
            perror("udp socket (raise ulimit -n?)");
            return 1;
        }
        getsockname(receivers[i], (struct sockaddr *)&address, &length);
        addresses[i] = address;
    }
    pid_t child = fork();
    if (child == 0) drain(receivers, n, 1);
    pin(0);
    int sender = socket(AF_INET, SOCK_DGRAM, 0);
    struct mmsghdr *messages = calloc(batch, sizeof *messages);
    char *payload = calloc(1, size);
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
    double cpu = cpu_seconds(before, after);
    // Datagrams the reader could not take in time were dropped at its socket (the sender paid
    // for them all the same): the kernel counts them.
    FILE *snmp = fopen("/proc/net/snmp", "r");
    char line[1024];
    long dropped = -1;
    int header = 0;
    while (snmp && fgets(line, sizeof line, snmp)) {
        if (strncmp(line, "Udp:", 4) != 0) continue;
        if (!header) { header = 1; continue; }
        long fields[8] = {0};
        sscanf(line + 4, "%ld %ld %ld %ld %ld", &fields[0], &fields[1], &fields[2], &fields[3], &fields[4]);
        dropped = fields[4];  // RcvbufErrors, since boot
    }
    if (snmp) fclose(snmp);
    printf("udp sockets=%d bytes=%d batch=%d datagrams/s=%.0f cpu_per_datagram_us=%.2f (sender core busy %.0f%%)\n", n,
        size, batch, sent / elapsed, cpu * 1e6 / sent, 100 * cpu / elapsed);
    printf("(receive-buffer drops since boot: %ld)\n", dropped);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 0;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1600;
    int size = argc > 2 ? atoi(argv[2]) : 40;
    double seconds = argc > 3 ? atof(argv[3]) : 5;
    if (n < 1 || size < 1 || seconds <= 0) {
        fprintf(stderr, "usage: loopback-floor N BYTES SECONDS [udp BATCH]\n");
        return 2;
    }
    if (argc > 4 && strcmp(argv[4], "udp") == 0) {
        int batch = argc > 5 ? atoi(argv[5]) : 16;
        if (size < 1 || size > 1400 || batch < 1 || batch > 1024) {
            fprintf(stderr, "udp: bytes must be 1-1400, batch 1-1024\n");
            return 2;
        }
        return udp_floor(n, size, seconds, batch);
    }
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    bind(listener, (struct sockaddr *)&address, sizeof address);
    listen(listener, 4096);
    getsockname(listener, (struct sockaddr *)&address, &length);
    int *writers = malloc(n * sizeof(int)), *readers = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) {
        writers[i] = socket(AF_INET, SOCK_STREAM, 0);
        connect(writers[i], (struct sockaddr *)&address, sizeof address);
        int one = 1;
        setsockopt(writers[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        readers[i] = accept(listener, NULL, NULL);
    }
    pid_t child = fork();
    if (child == 0) drain(readers, n, 0);
    pin(0);
    char *message = calloc(1, size);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    double start = now();
    long writes = 0;
    while (now() - start < seconds) {
        for (int i = 0; i < n; i++) {
            if (write(writers[i], message, size) == size) writes++;
        }
    }
    double elapsed = now() - start;
    getrusage(RUSAGE_SELF, &after);
    double cpu = cpu_seconds(before, after);
    printf("connections=%d bytes=%d writes/s=%.0f cpu_per_write_us=%.2f (writer core busy %.0f%%)\n", n, size,
        writes / elapsed, cpu * 1e6 / writes, 100 * cpu / elapsed);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 0;
}
