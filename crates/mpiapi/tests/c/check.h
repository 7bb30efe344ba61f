/* What the C tests share: CHECK(cond, fmt, ...) reports the failed condition with
 * the rank and line and ends the job with status 3; OK(call) checks an MPI call
 * returned MPI_SUCCESS; FAILS(call, class) checks it failed with that error class.
 * The including file defines `static int rank`. */
#ifndef MYRIX_TEST_CHECK_H
#define MYRIX_TEST_CHECK_H

#include <mpi.h>
#include <stdio.h>

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "rank %d: line %d: check failed: %s: ", rank,      \
                    __LINE__, #cond);                                          \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            MPI_Abort(MPI_COMM_WORLD, 3);                                      \
        }                                                                      \
    } while (0)

#define OK(call)                                                               \
    do {                                                                       \
        int rc_ = (call);                                                      \
        CHECK(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_);               \
    } while (0)

static inline int class_of(int rc) {
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

#define FAILS(call, want)                                                      \
    do {                                                                       \
        int rc_ = (call);                                                      \
        CHECK(class_of(rc_) == (want), "%s returned %d, class %d, not %d",     \
              #call, rc_, class_of(rc_), (want));                              \
    } while (0)

#endif
