/* Per-thread last-error message and env-controlled logging. */
#include "core/status.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char g_last_error[1024];

static mace_status set_message(mace_status status, const char *prefix, const char *fmt,
                               va_list ap) {
  char msg[sizeof(g_last_error)];
  vsnprintf(msg, sizeof(msg), fmt, ap);
  if (prefix) {
    char joined[2 * sizeof(g_last_error) + 2];
    snprintf(joined, sizeof(joined), "%s: %s", msg, g_last_error);
    memcpy(g_last_error, joined, sizeof(g_last_error) - 1);
    g_last_error[sizeof(g_last_error) - 1] = 0;
  } else {
    memcpy(g_last_error, msg, sizeof(msg));
  }
  return status;
}

mace_status mace_error(mace_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_message(status, NULL, fmt, ap);
  va_end(ap);
  MACE_VLOG(1, "error %d: %s", (int)status, g_last_error);
  return status;
}

mace_status mace_error_wrap(mace_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_message(status, "", fmt, ap);
  va_end(ap);
  return status;
}

const char *mace_last_error(void) { return g_last_error; }

const char *mace_status_name(mace_status status) {
  switch (status) {
    case MACE_OK: return "OK";
    case MACE_INVALID_ARGS: return "INVALID_ARGS";
    case MACE_OUT_OF_RESOURCES: return "OUT_OF_RESOURCES";
    case MACE_UNSUPPORTED: return "UNSUPPORTED";
    case MACE_INVALID_MODEL: return "INVALID_MODEL";
    case MACE_INVALID_INPUT: return "INVALID_INPUT";
    case MACE_RUNTIME_ERROR: return "RUNTIME_ERROR";
  }
  return "UNKNOWN";
}

static int env_level(const char *name, int dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  return atoi(v);
}

static int equal_nocase(const char *a, const char *b) {
  for (; *a && *b; ++a, ++b) {
    if (toupper((unsigned char)*a) != toupper((unsigned char)*b)) return 0;
  }
  return *a == *b;
}

int mace_log_level_parse(const char *text, int *level) {
  static const struct { const char *name; int level; } names[] = {
      {"INFO", MACE_LOG_INFO}, {"WARNING", MACE_LOG_WARNING}, {"WARN", MACE_LOG_WARNING},
      {"ERROR", MACE_LOG_ERROR}, {"FATAL", MACE_LOG_ERROR + 1}};
  char *end = NULL;
  long n;
  size_t i;
  if (text == NULL || *text == '\0') return 0;
  n = strtol(text, &end, 10);
  if (end != text && *end == '\0') {
    *level = n < 0 ? 0 : (n > 3 ? 3 : (int)n);
    return 1;
  }
  for (i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    if (equal_nocase(text, names[i].name)) {
      *level = names[i].level;
      return 1;
    }
  }
  return 0;
}

/* MACE_CPP_MIN_LOG_LEVEL: a number or a level name; anything else keeps the default, said once. */
static int env_log_level(void) {
  const char *v = getenv("MACE_CPP_MIN_LOG_LEVEL");
  int level = MACE_LOG_WARNING;
  if (v && *v && !mace_log_level_parse(v, &level)) {
    fprintf(stderr, "W mace] MACE_CPP_MIN_LOG_LEVEL=%s is not a level (0-3 or INFO, WARNING, "
            "ERROR, FATAL in any case); using WARNING\n", v);
    level = MACE_LOG_WARNING;
  }
  return level;
}

int mace_vlog_on(int level) {
  static int vlevel = -1;
  if (vlevel < 0) vlevel = env_level("MACE_CPP_MIN_VLOG_LEVEL", 0);
  return level <= vlevel;
}

void mace_log(int level, const char *file, int line, const char *fmt, ...) {
  static int min_level = -1;
  if (min_level < 0) min_level = env_log_level();
  if (level >= 0 && level < min_level) return;
  static const char tags[] = "IWE";
  char tag = level < 0 ? 'V' : tags[level > 2 ? 2 : level];
  const char *base = strrchr(file, '/');
  fprintf(stderr, "%c mace %s:%d] ", tag, base ? base + 1 : file, line);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}
