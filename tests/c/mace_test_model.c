/* Helper for the mace_run tests (not a test itself): writes a tiny model and its .npy files, and
 * compares .npy files.
 *
 *   mace_test_model write DIR     DIR/tiny.pb, DIR/tiny.data: the tiny model of tiny_model.h;
 *                                 DIR/x.npy (f32), DIR/x64.npy (the same values as f64),
 *                                 DIR/y_expected.npy, DIR/x_bad_shape.npy [1,2,4,6],
 *                                 DIR/x_garbage.npy (not a .npy)
 *   mace_test_model compare A B   exit 0 when A and B hold the same shape and |a - b| <= 1e-6
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npy.h"
#include "tiny_model.h"

static int write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "mace_test_model: cannot create %s: %s\n", path, strerror(errno));
    return 1;
  }
  int ok = fwrite(data, 1, size, f) == size;
  if (fclose(f) != 0) ok = 0;
  if (!ok) fprintf(stderr, "mace_test_model: cannot write %s\n", path);
  return !ok;
}

static int write_model(const char *dir) {
  size_t size = 0;
  uint8_t *graph = tiny_model_build(V_OK, &size), *weights = tiny_model_weights();
  char path[4096], err[256];
  int rc = 1;
  if (!graph || !weights) {
    fprintf(stderr, "mace_test_model: out of memory\n");
    goto done;
  }
  snprintf(path, sizeof(path), "%s/tiny.pb", dir);
  rc = write_file(path, graph, size);
  snprintf(path, sizeof(path), "%s/tiny.data", dir);
  rc |= write_file(path, weights, TINY_WEIGHTS_BYTES);

  float x[48], y[48];
  double x64[48];
  for (int i = 0; i < 48; ++i) {
    x[i] = (float)((i * 37) % 23 - 11) / 8.0f;
    x64[i] = x[i];
    float v = x[i] + kTinyBias[i / 16];
    y[i] = v > 0 ? v : 0;
  }
  struct { const char *name; mace_npy_type type; int64_t dims[4]; const void *data; } files[] = {
      {"x.npy", MACE_NPY_F32, {1, 3, 4, 4}, x},
      {"x64.npy", MACE_NPY_F64, {1, 3, 4, 4}, x64},
      {"y_expected.npy", MACE_NPY_F32, {1, 3, 4, 4}, y},
      {"x_bad_shape.npy", MACE_NPY_F32, {1, 2, 4, 6}, x},
  };
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); ++i) {
    snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
    if (mace_npy_write(path, files[i].type, files[i].dims, 4, files[i].data, err, sizeof(err)) != 0) {
      fprintf(stderr, "mace_test_model: %s\n", err);
      rc = 1;
    }
  }
  snprintf(path, sizeof(path), "%s/x_garbage.npy", dir);
  rc |= write_file(path, "\x93NUMPY\x01\x00\xff\xff{'descr'", 17);
done:
  free(graph);
  free(weights);
  return rc;
}

static int compare(const char *a_path, const char *b_path) {
  mace_npy_array a, b;
  char err[512];
  if (mace_npy_read(a_path, &a, err, sizeof(err)) != 0) {
    fprintf(stderr, "mace_test_model: %s\n", err);
    return 1;
  }
  if (mace_npy_read(b_path, &b, err, sizeof(err)) != 0) {
    fprintf(stderr, "mace_test_model: %s\n", err);
    mace_npy_free(&a);
    return 1;
  }
  int rc = 0;
  if (a.ndim != b.ndim || memcmp(a.dims, b.dims, sizeof(a.dims[0]) * (size_t)a.ndim) != 0 ||
      a.type != MACE_NPY_F32 || b.type != MACE_NPY_F32) {
    fprintf(stderr, "mace_test_model: %s and %s differ in shape or dtype\n", a_path, b_path);
    rc = 1;
  } else {
    for (int64_t i = 0; i < a.numel; ++i) {
      float x = ((float *)a.data)[i], y = ((float *)b.data)[i];
      if (!(fabsf(x - y) <= 1e-6f)) {
        fprintf(stderr, "mace_test_model: element %lld: %g vs %g\n", (long long)i, x, y);
        rc = 1;
        break;
      }
    }
  }
  if (!rc) printf("%s matches %s (%lld values)\n", a_path, b_path, (long long)a.numel);
  mace_npy_free(&a);
  mace_npy_free(&b);
  return rc;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "write") == 0) {
    if (mkdir(argv[2], 0777) != 0 && errno != EEXIST) {
      fprintf(stderr, "mace_test_model: cannot create %s: %s\n", argv[2], strerror(errno));
      return 1;
    }
    return write_model(argv[2]);
  }
  if (argc == 4 && strcmp(argv[1], "compare") == 0) return compare(argv[2], argv[3]);
  fprintf(stderr, "usage: mace_test_model write DIR | compare A.npy B.npy\n");
  return 2;
}
