/* Times mace_crc32_update (csrc/core/checksum.c) over a file's bytes: what the load-time check
 * adds to reading it. Built and run by benchmarks/checksum_load.py. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/checksum.h"

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: crc32_speed FILE REPEATS\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)n);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) return 1;
  fclose(f);
  double best = 1e30;
  uint32_t crc = 0;
  for (int r = 0; r < atoi(argv[2]); ++r) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    crc = mace_crc32_update(0, buf, (size_t)n);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    if (s < best) best = s;
  }
  printf("%ld %.6f %08x\n", n, best, (unsigned)crc);
  free(buf);
  return 0;
}
