/*
 * What the C test programs share: the count of checks made (atomic: several threads check) and
 * CHECK, which stops the program at the first failed condition with its file and line. Each
 * program defines its own EQ, since what explains a wrong value differs (a CW_E* code or errno).
 */
#ifndef CALLWHEEL_TEST_CHECK_H
#define CALLWHEEL_TEST_CHECK_H

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_long checks;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        checks++;                                                                       \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

#endif
