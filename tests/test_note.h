#ifndef TESTS_TEST_NOTE_H
#define TESTS_TEST_NOTE_H
/* A part of a test that this machine cannot run, said on stderr. Criterion 2.4 makes the whole run exit 1
 * after any cr_log_warn, even with every test passing, so a machine without gnuplot or AVX-512 VNNI would
 * fail `make test`; `make lint` refuses cr_log_warn in tests/ for that reason. A test left out entirely is
 * skipped instead (cr_skip_test), which tests/test_skip_summary.c lists. */
#include <stdio.h>

#define test_note(...)                                                                                       \
    do {                                                                                                     \
        fprintf(stderr, "[NOTE] " __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                                 \
    } while (0)

#endif
