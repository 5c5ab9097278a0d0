/*
 * What the C test programs share: the count of checks made (atomic: several threads check),
 * CHECK, which stops the program at the first failed condition with its file and line, EQ_CODE
 * for results that are CW_E* codes (a program whose results are errno values defines its own
 * EQ), and the address space in use for the RLIMIT_AS tests.
 */
#ifndef CALLWHEEL_TEST_CHECK_H
#define CALLWHEEL_TEST_CHECK_H

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __linux__
#include <unistd.h>
#endif

static atomic_long checks;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        checks++;                                                                       \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* EQ for the programs whose results are CW_E* codes (test_timerset.c, whose results are errno
 * values, defines its own): the failing line, both values, and the code's text. */
#define EQ_CODE(actual, expected)                                                       \
    do {                                                                                \
        long long a_ = (long long)(actual), e_ = (long long)(expected);                 \
        checks++;                                                                       \
        if (a_ != e_) {                                                                 \
            fprintf(stderr, "%s:%d: %s is %lld, expected %s = %lld (%s)\n", __FILE__,   \
                    __LINE__, #actual, a_, #expected, e_,                               \
                    a_ < 0 ? cw_strerror((int)a_) : "not an error");                    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

#ifdef __linux__
/* The address space this process uses now, from /proc (for the RLIMIT_AS tests). */
static inline unsigned long long address_space_in_use(void) {
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    CHECK(f != NULL);
    CHECK(fscanf(f, "%llu", &pages) == 1);
    fclose(f);
    return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}
#endif

#endif
