/* A main() for the fuzz harnesses outside libFuzzer: feeds every file named on the command line (a
 * directory: every file in it) to LLVMFuzzerTestOneInput once, so that ctest replays the committed
 * corpus, past findings included, in every build (the ASan one too) without clang. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? 2 * cap : 4096;
      uint8_t *grown = realloc(buf, cap);
      if (!grown) {
        rc = 1;
        goto done;
      }
      buf = grown;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  LLVMFuzzerTestOneInput(buf, n);
done:
  free(buf);
  fclose(f);
  return rc;
}

int main(int argc, char **argv) {
  int rc = 0, count = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: %s does not exist\n", argv[i]);
      rc = 1;
    } else if (S_ISDIR(st.st_mode)) {
      DIR *d = opendir(argv[i]);
      struct dirent *e;
      while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
        rc |= replay_file(path);
        ++count;
      }
      if (d) closedir(d);
    } else {
      rc |= replay_file(argv[i]);
      ++count;
    }
  }
  if (count == 0) {
    fprintf(stderr, "replay: no inputs\n");
    rc = 1;
  }
  if (!rc) printf("replay: %d inputs ran\n", count);
  return rc;
}
