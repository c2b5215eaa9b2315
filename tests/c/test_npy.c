/* Unit test of the tools' .npy reader/writer: round trips, numpy-written headers, refusals, corruption. */
#define _POSIX_C_SOURCE 200809L  /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "test_util.h"

static char tmpdir[256];

static void path_of(char *buf, size_t size, const char *name) {
  snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* Builds an .npy byte image by hand: version major, header text (padded as numpy does), data. */
static size_t make_npy(unsigned char *out, int major, const char *header, const void *data, size_t nbytes) {
  size_t pre = major == 1 ? 10 : 12;
  size_t hl = strlen(header);
  size_t total = pre + hl + 1;
  size_t padded = (total + 63) / 64 * 64;
  size_t hlen = hl + (padded - total) + 1;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)major;
  out[7] = 0;
  if (major == 1) {
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8);
  } else {
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8);
    out[10] = out[11] = 0;
  }
  memcpy(out + pre, header, hl);
  memset(out + pre + hl, ' ', padded - total);
  out[pre + hlen - 1] = '\n';
  memcpy(out + pre + hlen, data, nbytes);
  return pre + hlen + nbytes;
}

static void test_round_trip(void) {
  char path[512], err[256];
  path_of(path, sizeof(path), "rt.npy");
  float f[6] = {1.5f, -2, 3, 4, 5, 6.25f};
  int64_t dims[2] = {2, 3};
  CHECK(mace_npy_write(path, MACE_NPY_F32, dims, 2, f, err, sizeof(err)) == 0, "%s", err);
  mace_npy_array a;
  CHECK(mace_npy_read(path, &a, err, sizeof(err)) == 0, "%s", err);
  CHECK(a.type == MACE_NPY_F32 && a.ndim == 2 && a.dims[0] == 2 && a.dims[1] == 3 && a.numel == 6,
        "type %d ndim %d", (int)a.type, a.ndim);
  CHECK(a.data && memcmp(a.data, f, sizeof(f)) == 0, "data differs");
  mace_npy_free(&a);

  /* Every type, 0-d, 1-d and empty shapes. */
  mace_npy_type types[] = {MACE_NPY_F32, MACE_NPY_F64, MACE_NPY_I64, MACE_NPY_I32,
                           MACE_NPY_BOOL, MACE_NPY_U8, MACE_NPY_I8};
  int64_t shapes[][3] = {{0}, {7}, {2, 0}, {1, 2, 3}};
  int ndims[] = {0, 1, 2, 3};
  unsigned char data[64];
  for (int i = 0; i < 64; i++) data[i] = (unsigned char)(i * 37 + 1) & 0x01; /* valid bools too */
  for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
    for (int s = 0; s < 4; s++) {
      CHECK(mace_npy_write(path, types[t], shapes[s], ndims[s], data, err, sizeof(err)) == 0, "%s", err);
      CHECK(mace_npy_read(path, &a, err, sizeof(err)) == 0, "type %s ndim %d: %s",
            mace_npy_type_descr(types[t]), ndims[s], err);
      CHECK(a.type == types[t] && a.ndim == ndims[s], "type %s ndim %d", mace_npy_type_descr(types[t]),
            a.ndim);
      for (int d = 0; d < a.ndim && d < ndims[s]; d++) CHECK(a.dims[d] == shapes[s][d], "dim %d", d);
      CHECK(memcmp(a.data, data, (size_t)a.numel * a.itemsize) == 0, "data of %s",
            mace_npy_type_descr(types[t]));
      mace_npy_free(&a);
    }
  }
}

/* Headers exactly as numpy 1.x/2.x writes them (np.save), versions 1.0 and 2.0. */
static void test_numpy_headers(void) {
  unsigned char buf[512];
  char err[256];
  mace_npy_array a;
  double d[3] = {1, 2.5, -3};
  size_t n = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", d, sizeof(d));
  CHECK(mace_npy_parse(buf, n, &a, err, sizeof(err)) == 0, "%s", err);
  CHECK(a.type == MACE_NPY_F64 && a.ndim == 1 && a.dims[0] == 3, "f8 header");
  float f[3];
  CHECK(mace_npy_convert_to(&a, MACE_DT_F32, f) == 0 && f[1] == 2.5f && f[2] == -3.0f, "f8 -> f32");
  mace_npy_free(&a);

  int64_t l[4] = {0, 1, -2, 3};
  n = make_npy(buf, 2, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", l, sizeof(l));
  CHECK(mace_npy_parse(buf, n, &a, err, sizeof(err)) == 0, "v2: %s", err);
  CHECK(a.type == MACE_NPY_I64 && a.ndim == 2 && a.dims[1] == 2, "v2 i8");
  int32_t i4[4];
  CHECK(mace_npy_convert_to(&a, MACE_DT_I32, i4) == 0 && i4[2] == -2, "i8 -> i4");
  mace_npy_free(&a);

  /* Key order and quoting vary between writers. */
  n = make_npy(buf, 1, "{\"shape\": (), \"fortran_order\": False, \"descr\": \"|b1\"}", "\x01", 1);
  CHECK(mace_npy_parse(buf, n, &a, err, sizeof(err)) == 0, "scalar bool: %s", err);
  CHECK(a.type == MACE_NPY_BOOL && a.ndim == 0 && a.numel == 1, "scalar");
  mace_npy_free(&a);
}

static void expect_error(const char *header, const void *data, size_t nbytes, const char *want) {
  unsigned char buf[512];
  char err[256] = "";
  mace_npy_array a;
  size_t n = make_npy(buf, 1, header, data, nbytes);
  int rc = mace_npy_parse(buf, n, &a, err, sizeof(err));
  CHECK(rc != 0, "accepted %s", header);
  if (rc == 0) {
    mace_npy_free(&a);
    return;
  }
  CHECK(strstr(err, want) != NULL, "header %s: message '%s' does not mention '%s'", header, err, want);
}

static void test_refusals(void) {
  float f[4] = {0};
  expect_error("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", f, 16, "Fortran");
  expect_error("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", f, 16, "big-endian");
  expect_error("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }", f, 8, "<f2");
  expect_error("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", f, 16, "<c8");
  expect_error("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", f, 8, "structured");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", f, 12, "truncated");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }", f, 16, "unexpected");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", f, 4,
               "dimensions");
  expect_error("{'descr': '<f4', 'fortran_order': False, }", f, 4, "shape");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", f, 4,
               "too large");
  expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }",
               f, 4, "too large");
  expect_error("not a dict", f, 4, "dict");

  char err[256];
  mace_npy_array a;
  CHECK(mace_npy_parse("PK\x03\x04zipfile...", 15, &a, err, sizeof(err)) != 0 && strstr(err, "magic"),
        "npz/zip must be refused as not .npy: %s", err);
  CHECK(mace_npy_parse("", 0, &a, err, sizeof(err)) != 0, "empty input accepted");
  char path[512];
  path_of(path, sizeof(path), "does_not_exist.npy");
  CHECK(mace_npy_read(path, &a, err, sizeof(err)) != 0 && strstr(err, "does_not_exist.npy"),
        "missing file: %s", err);
  unsigned char v9[16] = {0x93, 'N', 'U', 'M', 'P', 'Y', 9, 0, 0, 0};
  CHECK(mace_npy_parse(v9, sizeof(v9), &a, err, sizeof(err)) != 0 && strstr(err, "version"),
        "version 9: %s", err);
  unsigned char big[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0xff};
  CHECK(mace_npy_parse(big, sizeof(big), &a, err, sizeof(err)) != 0, "huge header length accepted");
}

/* Every truncation and every single-byte corruption of a valid file parses or fails cleanly
 * (under ASan this checks that no read goes out of bounds). */
static void test_corruption(void) {
  unsigned char buf[512], mut[512];
  float f[6] = {1, 2, 3, 4, 5, 6};
  size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f, sizeof(f));
  char err[256];
  mace_npy_array a;
  int ok = 0, bad = 0;
  for (size_t len = 0; len < n; len++) {
    unsigned char *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    if (mace_npy_parse(copy, len, &a, err, sizeof(err)) == 0) {
      CHECK(0, "truncated to %zu bytes but accepted", len);
      mace_npy_free(&a);
    }
    free(copy);
  }
  static const unsigned char vals[] = {0x00, 0x01, 0x20, 0x27, 0x28, 0x29, 0x2c, 0x30, 0x39, 0x3a,
                                       0x7b, 0x7d, 0x80, 0xff};
  for (size_t pos = 0; pos < n; pos++) {
    for (size_t v = 0; v < sizeof(vals); v++) {
      memcpy(mut, buf, n);
      mut[pos] = vals[v];
      unsigned char *copy = malloc(n); /* exact size so ASan sees overreads */
      memcpy(copy, mut, n);
      if (mace_npy_parse(copy, n, &a, err, sizeof(err)) == 0) {
        ok++;
        CHECK((size_t)a.numel * a.itemsize <= n, "accepted more data than the file holds");
        mace_npy_free(&a);
      } else {
        bad++;
        CHECK(err[0] != '\0', "error without a message at byte %zu", pos);
      }
      free(copy);
    }
  }
  printf("corruption: %d mutated files parsed, %d refused\n", ok, bad);
}

int main(void) {
  const char *t = getenv("TMPDIR");
  snprintf(tmpdir, sizeof(tmpdir), "%s/mace_test_npy_XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_round_trip();
  test_numpy_headers();
  test_refusals();
  test_corruption();
  char path[512];
  path_of(path, sizeof(path), "rt.npy");
  remove(path);
  remove(tmpdir);
  return TEST_FINISH("%ld checks", test_checks);
}
