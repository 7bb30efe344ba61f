/* Small helpers for myrix's own MX test programs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <myriexpress.h>
#include <mx_extensions.h>

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

/* A call that must succeed. */
#define OK(call)                                                                \
  do {                                                                          \
    mx_return_t ok_ret_ = (call);                                               \
    if (ok_ret_ != MX_SUCCESS) {                                                \
      fprintf(stderr, "%s:%d: %s: %s (%d)\n", __FILE__, __LINE__, #call,        \
              mx_strerror(ok_ret_), (int)ok_ret_);                              \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

/* A call that must fail with `code` (the error handler returns). */
#define FAILS(code, call)                                                       \
  do {                                                                          \
    mx_return_t f_ret_ = (call);                                                \
    if (f_ret_ != (code)) {                                                     \
      fprintf(stderr, "%s:%d: %s: got %d (%s), want %d (%s)\n", __FILE__,      \
              __LINE__, #call, (int)f_ret_, mx_strerror(f_ret_), (int)(code),   \
              mx_strerror(code));                                               \
      exit(1);                                                                  \
    }                                                                           \
    printf("%-44s -> %2d %s\n", #code, (int)f_ret_, mx_strerror(f_ret_));       \
  } while (0)

static inline unsigned char pattern(size_t i, unsigned seed)
{
  return (unsigned char)(i * 7 + seed * 13 + (i >> 8));
}
