// The kernel's floor for one server core on this machine: how much CPU one small TCP write
// on loopback costs the writing core (send path plus, on loopback, the receive path, which
// runs on the sender's core), with nothing but write() in user space. One writer thread
// (pin it with taskset) writes MSG-byte messages round-robin to N connections; a reader
// process on the other core drains them with epoll. Prints writes/s and CPU µs per write.
// Build and run: cc -O2 -o /tmp/loopback-floor scripts/loopback-floor.c
//                /tmp/loopback-floor 1600 40 5     (connections, bytes, seconds)
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

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1600;
    int size = argc > 2 ? atoi(argv[2]) : 40;
    double seconds = argc > 3 ? atof(argv[3]) : 5;
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
    if (child == 0) {  // the reader, on core 1
        pin(1);
        int poll = epoll_create1(0);
        for (int i = 0; i < n; i++) {
            struct epoll_event event = {.events = EPOLLIN, .data.fd = readers[i]};
            epoll_ctl(poll, EPOLL_CTL_ADD, readers[i], &event);
        }
        struct epoll_event events[256];
        char buffer[65536];
        for (;;) {
            int ready = epoll_wait(poll, events, 256, -1);
            for (int i = 0; i < ready; i++) read(events[i].data.fd, buffer, sizeof buffer);
        }
    }
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
    double cpu = (after.ru_utime.tv_sec - before.ru_utime.tv_sec) + (after.ru_utime.tv_usec - before.ru_utime.tv_usec) / 1e6
        + (after.ru_stime.tv_sec - before.ru_stime.tv_sec) + (after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6;
    printf("connections=%d bytes=%d writes/s=%.0f cpu_per_write_us=%.2f (writer core busy %.0f%%)\n", n, size,
        writes / elapsed, cpu * 1e6 / writes, 100 * cpu / elapsed);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 0;
}
