/* What a wake-up costs the woken thread on this machine: woken by a timer vs by another process's write.
 * Build and run: cc -O2 bench/load/wakeups.c -o /tmp/wakeups && /tmp/wakeups
 * Prints CPU microseconds (user+sys of the sleeping thread) per wake-up. On the 2-core VM this project is
 * developed on, a timer wake-up cost about 27 us and a wake-up by a socket write about 4 us, which is why
 * cqlbench groups the operations of a fixed-rate schedule into ticks (`--tick`, default 2 ms); a write's
 * wake-up with a short timeout armed and cancelled cost about 13 us, which is why the loop keeps its
 * wake-up time in a timerfd set only when that time changes. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { WAKES = 6000, GAP_NS = 333000 };

static double thread_cpu_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(void) {
    int ep = epoll_create1(0);
    struct epoll_event events[4];
    double start = thread_cpu_us();
    for (int i = 0; i < WAKES; i++) {
        struct timespec gap = {0, GAP_NS};
        epoll_pwait2(ep, events, 4, &gap, NULL);
    }
    printf("woken by a timer (epoll_pwait2, %d us sleeps): %.2f us CPU per wake-up\n", GAP_NS / 1000,
           (thread_cpu_us() - start) / WAKES);

    int pair[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
    struct epoll_event ev = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, pair[0], &ev);
    /* The same wake-ups by a write, first with no timer, then with a 1 ms timeout armed at each sleep
     * and cancelled by the write (what a loop that sleeps "until the next due time or the next
     * response" does when the response comes first). */
    const char *kinds[2] = {"woken by another process's write (epoll_wait, no timeout)",
                            "woken by another process's write, a 1 ms timeout armed (epoll_pwait2)"};
    for (int kind = 0; kind < 2; kind++) {
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            for (int i = 0; i < WAKES; i++) {
                struct timespec gap = {0, GAP_NS};
                nanosleep(&gap, NULL);
                char byte = 1;
                if (write(pair[1], &byte, 1) != 1) return 1;
            }
            return 0;
        }
        start = thread_cpu_us();
        for (int i = 0; i < WAKES; i++) {
            char byte;
            struct timespec limit = {0, 1000000};
            if (kind == 0)
                epoll_wait(ep, events, 4, -1);
            else
                epoll_pwait2(ep, events, 4, &limit, NULL);
            if (read(pair[0], &byte, 1) != 1) return 1;
        }
        printf("%s: %.2f us CPU per wake-up\n", kinds[kind], (thread_cpu_us() - start) / WAKES);
        waitpid(child, NULL, 0);
    }
    return 0;
}
