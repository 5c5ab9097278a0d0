/* Three timers on a caller-driven wheel, run on the monotonic clock until all have fired. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include "callwheel.h"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void) {
    cw_wheel *w;
    int rc = cw_wheel_new(0, now_ns(), &w);        /* 0: grows as timers are added */
    if (rc < 0) { fprintf(stderr, "%s\n", cw_strerror(rc)); return 1; }
    cw_handle h;
    /* Due in 30, 10 and 20 ms, each allowed 2 ms late: close windows share a wake-up. */
    cw_wheel_add_in(w, 30000000, 2000000, 3, &h);
    cw_wheel_add_in(w, 10000000, 2000000, 1, &h);
    cw_wheel_add_in(w, 20000000, 2000000, 2, &h);
    uint64_t ns;
    while (cw_wheel_timeout(w, &ns) == 1) {         /* until the earliest window ends */
        struct timespec d = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
        nanosleep(&d, NULL);
        cw_wheel_update(w, now_ns());
        cw_expiry e;
        while (cw_wheel_get(w, &e) == 1)
            printf("timer %" PRIu64 " expired\n", e.value);
    }
    cw_wheel_free(w);
    return 0;
}
