/*
 * An epoll event loop driving a caller-driven wheel, the way a server keeps idle timeouts:
 * 1,000 connections each with an idle timer (100 to 300 ms, 5 ms of tolerance), activity on
 * a pipe that a heartbeat timer writes to every 10 ms, and each byte read "touching" one
 * connection, which pushes its idle timer back. epoll_wait sleeps for cw_wheel_timeout,
 * rounded up to its milliseconds. At the end it prints how many wake-ups served how many
 * expiries, and checks that no timer fired before its deadline (exit status 1 if one did).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include "callwheel.h"

#define CONNECTIONS 1000
#define MS 1000000u
#define HEARTBEAT UINT64_MAX /* the value that marks the heartbeat timer */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void check(int rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", what, cw_strerror(rc));
        exit(1);
    }
}

int main(void) {
    int fds[2];
    int ep = epoll_create1(0);
    if (ep < 0 || pipe(fds) != 0) { perror("setup"); return 1; }
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[0] };
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev) != 0) { perror("epoll_ctl"); return 1; }

    cw_wheel *w;
    check(cw_wheel_new(0, now_ns(), &w), "cw_wheel_new");
    static cw_handle idle[CONNECTIONS];
    srand(7);
    for (uint64_t c = 0; c < CONNECTIONS; c++)
        check(cw_wheel_add_in(w, (100 + (uint64_t)rand() % 200) * MS, 5 * MS, c, &idle[c]),
              "cw_wheel_add_in");
    cw_handle beat;
    check(cw_wheel_add_periodic(w, now_ns() + 10 * MS, 10 * MS, 0, CW_MISSED_SKIP, HEARTBEAT,
                                &beat), "cw_wheel_add_periodic");

    long wakeups = 0, expired = 0, touched = 0, early = 0, beats = 0;
    uint64_t worst_late = 0;
    while (expired < CONNECTIONS) {
        uint64_t ns;
        int timeout = -1;
        if (cw_wheel_timeout(w, &ns) == 1)
            timeout = (int)((ns + MS - 1) / MS);
        struct epoll_event got[8];
        int n = epoll_wait(ep, got, 8, timeout);
        if (n < 0) { perror("epoll_wait"); return 1; }
        wakeups++;
        uint64_t now = now_ns();
        for (int i = 0; i < n; i++) {
            char buf[64];
            ssize_t r = read(got[i].data.fd, buf, sizeof buf);
            for (ssize_t b = 0; b < r; b++) {
                /* Activity on a connection: its idle timer starts over (if still pending). */
                uint64_t c = (uint64_t)rand() % CONNECTIONS;
                if (cw_wheel_reset_in(w, idle[c], 150 * MS, 5 * MS) == CW_OK)
                    touched++;
            }
        }
        check(cw_wheel_update(w, now), "cw_wheel_update");
        cw_expiry e;
        while (cw_wheel_get(w, &e) == 1) {
            if (e.deadline > now)
                early++;
            if (now - e.deadline > worst_late)
                worst_late = now - e.deadline;
            if (e.value == HEARTBEAT) {
                beats++;
                if (write(fds[1], "x", 1) != 1) { perror("write"); return 1; }
            } else {
                expired++;
            }
        }
    }
    check(cw_wheel_del(w, beat, NULL), "cw_wheel_del");
    cw_wheel_info info;
    check(cw_wheel_counts(w, &info), "cw_wheel_counts");
    printf("%ld idle timeouts and %ld heartbeats in %ld wake-ups; %ld connections touched; "
           "%ld early; latest %.2f ms after its deadline; %zu timers left\n",
           expired, beats, wakeups, touched, early, (double)worst_late / MS, info.pending);
    cw_wheel_free(w);
    close(fds[0]);
    close(fds[1]);
    close(ep);
    return early == 0 && info.pending == 0 ? 0 : 1;
}
