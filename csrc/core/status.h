/* Error reporting (per-thread last-error message) and logging for the mace core. */
#ifndef MACE_CORE_STATUS_H_
#define MACE_CORE_STATUS_H_

#include <stdarg.h>

#include "mace/mace.h"

/* Records `fmt` as this thread's last error and returns `status`, so a failure reads
 *   return mace_error(MACE_INVALID_MODEL, "op '%s': %d inputs, needs 2", name, n); */
mace_status mace_error(mace_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefixes the current last-error message with `fmt` ("while loading op 'x': ..."). */
mace_status mace_error_wrap(mace_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Logging: MACE_CPP_MIN_LOG_LEVEL (0 info, 1 warning, 2 error, 3 fatal-only; default 1; or
 * the names INFO, WARNING/WARN, ERROR, FATAL in any case) filters LOG; MACE_CPP_MIN_VLOG_LEVEL
 * (default 0) enables VLOG(n) for n <= level. */
enum { MACE_LOG_INFO = 0, MACE_LOG_WARNING = 1, MACE_LOG_ERROR = 2 };

/* *level = the level `text` names (a number, clamped to 0..3, or a name above); 0 when text is
 * neither (level untouched). */
int mace_log_level_parse(const char *text, int *level);
void mace_log(int level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int mace_vlog_on(int level);

#define MACE_LOG(level, ...) mace_log(MACE_LOG_##level, __FILE__, __LINE__, __VA_ARGS__)
#define MACE_VLOG(n, ...)                                       \
  do {                                                          \
    if (mace_vlog_on(n)) mace_log(-(n), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

/* Propagate a failing status. */
#define MACE_RETURN_IF_ERROR(expr)          \
  do {                                      \
    mace_status mace_st_ = (expr);          \
    if (mace_st_ != MACE_OK) return mace_st_; \
  } while (0)

#endif /* MACE_CORE_STATUS_H_ */
