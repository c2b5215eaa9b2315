/* .npy reading and writing for the tools and tests: header dict parsing, dtype mapping, conversion. */
#include "npy.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static int fail(char *err, size_t err_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t err_size, const char *fmt, ...) {
  if (err && err_size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
  }
  return -1;
}

size_t mace_npy_type_size(mace_npy_type type) {
  switch (type) {
    case MACE_NPY_F32: return 4;
    case MACE_NPY_F64: return 8;
    case MACE_NPY_I64: return 8;
    case MACE_NPY_I32: return 4;
    case MACE_NPY_BOOL: return 1;
    case MACE_NPY_U8: return 1;
    case MACE_NPY_I8: return 1;
  }
  return 0;
}

const char *mace_npy_type_descr(mace_npy_type type) {
  switch (type) {
    case MACE_NPY_F32: return "<f4";
    case MACE_NPY_F64: return "<f8";
    case MACE_NPY_I64: return "<i8";
    case MACE_NPY_I32: return "<i4";
    case MACE_NPY_BOOL: return "|b1";
    case MACE_NPY_U8: return "|u1";
    case MACE_NPY_I8: return "|i1";
  }
  return "?";
}

int mace_npy_type_of(mace_dtype dtype, mace_npy_type *out) {
  switch (dtype) {
    case MACE_DT_F32: *out = MACE_NPY_F32; return 0;
    case MACE_DT_I32: *out = MACE_NPY_I32; return 0;
    case MACE_DT_I64: *out = MACE_NPY_I64; return 0;
    case MACE_DT_U8: *out = MACE_NPY_U8; return 0;
    case MACE_DT_I8: *out = MACE_NPY_I8; return 0;
    case MACE_DT_BOOL: *out = MACE_NPY_BOOL; return 0;
    default: return -1;
  }
}

mace_dtype mace_npy_dtype_of(mace_npy_type type) {
  switch (type) {
    case MACE_NPY_F32: return MACE_DT_F32;
    case MACE_NPY_I64: return MACE_DT_I64;
    case MACE_NPY_I32: return MACE_DT_I32;
    case MACE_NPY_BOOL: return MACE_DT_BOOL;
    case MACE_NPY_U8: return MACE_DT_U8;
    case MACE_NPY_I8: return MACE_DT_I8;
    case MACE_NPY_F64: return MACE_DT_INVALID;
  }
  return MACE_DT_INVALID;
}

/* ---- header dict parser: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } ---- */

typedef struct hdr_parser {
  const char *p, *end;
} hdr_parser;

static void skip_ws(hdr_parser *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

static int accept(hdr_parser *h, char c) {
  skip_ws(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return 1;
  }
  return 0;
}

/* A quoted Python string without escapes into buf. */
static int parse_str(hdr_parser *h, char *buf, size_t size) {
  skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return -1;
  char q = *h->p++;
  size_t n = 0;
  while (h->p < h->end && *h->p != q) {
    if (*h->p == '\\' || n + 1 >= size) return -1;
    buf[n++] = *h->p++;
  }
  if (h->p >= h->end) return -1;
  h->p++;
  buf[n] = '\0';
  return 0;
}

static int accept_word(hdr_parser *h, const char *w) {
  skip_ws(h);
  size_t n = strlen(w);
  if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
    h->p += n;
    return 1;
  }
  return 0;
}

static int parse_header(const char *text, size_t len, mace_npy_array *out, char *err, size_t err_size) {
  hdr_parser h = {text, text + len};
  char key[64], descr[64] = {0};
  int have_descr = 0, have_shape = 0, have_order = 0, fortran = 0;
  if (!accept(&h, '{')) return fail(err, err_size, "header is not a dict (expected '{')");
  for (;;) {
    if (accept(&h, '}')) break;
    if (parse_str(&h, key, sizeof(key)) != 0) return fail(err, err_size, "header: bad or missing key");
    if (!accept(&h, ':')) return fail(err, err_size, "header: expected ':' after '%s'", key);
    if (strcmp(key, "descr") == 0) {
      skip_ws(&h);
      if (h.p < h.end && *h.p == '[')
        return fail(err, err_size, "structured dtypes (descr is a list) are not supported");
      if (parse_str(&h, descr, sizeof(descr)) != 0) return fail(err, err_size, "header: bad 'descr'");
      have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (accept_word(&h, "True")) fortran = 1;
      else if (accept_word(&h, "False")) fortran = 0;
      else return fail(err, err_size, "header: 'fortran_order' is neither True nor False");
      have_order = 1;
    } else if (strcmp(key, "shape") == 0) {
      if (!accept(&h, '(')) return fail(err, err_size, "header: 'shape' is not a tuple");
      out->ndim = 0;
      while (!accept(&h, ')')) {
        skip_ws(&h);
        if (h.p >= h.end || *h.p < '0' || *h.p > '9')
          return fail(err, err_size, "header: bad dimension in 'shape'");
        int64_t v = 0;
        while (h.p < h.end && *h.p >= '0' && *h.p <= '9') {
          if (v > (INT64_MAX - 9) / 10) return fail(err, err_size, "header: dimension too large");
          v = v * 10 + (*h.p++ - '0');
        }
        if (accept(&h, 'L')) { /* Python 2 long suffix */ }
        if (out->ndim >= MACE_NPY_MAX_DIMS)
          return fail(err, err_size, "arrays with more than %d dimensions are not supported",
                      MACE_NPY_MAX_DIMS);
        out->dims[out->ndim++] = v;
        if (!accept(&h, ',')) {
          if (!accept(&h, ')')) return fail(err, err_size, "header: expected ',' or ')' in 'shape'");
          break;
        }
      }
      have_shape = 1;
    } else {
      return fail(err, err_size, "header: unknown key '%s'", key);
    }
    if (!accept(&h, ',')) {
      if (!accept(&h, '}')) return fail(err, err_size, "header: expected ',' or '}'");
      break;
    }
  }
  if (!have_descr || !have_shape || !have_order)
    return fail(err, err_size, "header misses %s", !have_descr ? "'descr'" : !have_shape ? "'shape'"
                                                                          : "'fortran_order'");
  if (fortran) return fail(err, err_size, "Fortran-order arrays are not supported (save a C-order array)");

  static const struct { const char *descr; mace_npy_type type; } kTypes[] = {
      {"<f4", MACE_NPY_F32}, {"<f8", MACE_NPY_F64}, {"<i8", MACE_NPY_I64}, {"<i4", MACE_NPY_I32},
      {"|b1", MACE_NPY_BOOL}, {"|u1", MACE_NPY_U8}, {"<u1", MACE_NPY_U8}, {"|i1", MACE_NPY_I8},
      {"<i1", MACE_NPY_I8}, {"<b1", MACE_NPY_BOOL}};
  for (size_t i = 0; i < sizeof(kTypes) / sizeof(kTypes[0]); i++) {
    if (strcmp(descr, kTypes[i].descr) == 0) {
      out->type = kTypes[i].type;
      out->itemsize = mace_npy_type_size(out->type);
      return 0;
    }
  }
  if (descr[0] == '>')
    return fail(err, err_size, "big-endian dtype '%s' is not supported (use a little-endian array)", descr);
  return fail(err, err_size,
              "dtype '%s' is not supported (supported: <f4 <f8 <i8 <i4 |b1 |u1 |i1)", descr);
}

int mace_npy_parse(const void *bytes, size_t size, mace_npy_array *out, char *err, size_t err_size) {
  const unsigned char *b = (const unsigned char *)bytes;
  memset(out, 0, sizeof(*out));
  if (err && err_size) err[0] = '\0';
  if (size < 10 || memcmp(b, kMagic, sizeof(kMagic)) != 0)
    return fail(err, err_size, "not a .npy file (no \\x93NUMPY magic)");
  int major = b[6];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = (size_t)b[8] | ((size_t)b[9] << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return fail(err, err_size, "truncated .npy header");
    hlen = (size_t)b[8] | ((size_t)b[9] << 8) | ((size_t)b[10] << 16) | ((size_t)b[11] << 24);
    hstart = 12;
  } else {
    return fail(err, err_size, ".npy format version %d.%d is not supported", major, b[7]);
  }
  if (hlen > size - hstart) return fail(err, err_size, "truncated .npy header (%zu bytes announced)", hlen);
  if (parse_header((const char *)b + hstart, hlen, out, err, err_size) != 0) return -1;

  int64_t numel = 1;
  for (int i = 0; i < out->ndim; i++) {
    if (out->dims[i] != 0 && numel > INT64_MAX / out->dims[i])
      return fail(err, err_size, "shape too large");
    numel *= out->dims[i];
  }
  size_t avail = size - hstart - hlen;
  if ((uint64_t)numel > (uint64_t)SIZE_MAX / out->itemsize)
    return fail(err, err_size, "shape too large");
  size_t need = (size_t)numel * out->itemsize;
  if (avail < need)
    return fail(err, err_size, "truncated data: shape needs %zu bytes, file holds %zu", need, avail);
  if (avail > need)
    return fail(err, err_size, "%zu unexpected bytes after the array data", avail - need);
  out->numel = numel;
  out->data = malloc(need ? need : 1);
  if (!out->data) return fail(err, err_size, "out of memory (%zu bytes)", need);
  if (need) memcpy(out->data, b + hstart + hlen, need);
  return 0;
}

int mace_npy_read(const char *path, mace_npy_array *out, char *err, size_t err_size) {
  memset(out, 0, sizeof(*out));
  FILE *f = fopen(path, "rb");
  if (!f) return fail(err, err_size, "cannot open '%s': %s", path, strerror(errno));
  size_t cap = 1 << 16, size = 0;
  unsigned char *buf = malloc(cap);
  int rc = -1;
  if (!buf) {
    fail(err, err_size, "out of memory");
    goto done;
  }
  for (;;) {
    if (size == cap) {
      if (cap > SIZE_MAX / 2) {
        fail(err, err_size, "'%s' is too large", path);
        goto done;
      }
      unsigned char *nb = realloc(buf, cap * 2);
      if (!nb) {
        fail(err, err_size, "out of memory reading '%s'", path);
        goto done;
      }
      buf = nb;
      cap *= 2;
    }
    size_t n = fread(buf + size, 1, cap - size, f);
    size += n;
    if (n == 0) break;
  }
  if (ferror(f)) {
    fail(err, err_size, "cannot read '%s'", path);
    goto done;
  }
  rc = mace_npy_parse(buf, size, out, err, err_size);
  if (rc != 0 && err && err_size) {
    char tmp[512];
    snprintf(tmp, sizeof(tmp), "%s: %s", path, err);
    snprintf(err, err_size, "%s", tmp);
  }
done:
  free(buf);
  fclose(f);
  return rc;
}

void mace_npy_free(mace_npy_array *a) {
  if (!a) return;
  free(a->data);
  a->data = NULL;
}

int mace_npy_write(const char *path, mace_npy_type type, const int64_t *dims, int ndim,
                   const void *data, char *err, size_t err_size) {
  if (ndim < 0 || ndim > MACE_NPY_MAX_DIMS) return fail(err, err_size, "bad ndim %d", ndim);
  if (mace_npy_type_size(type) == 0) return fail(err, err_size, "bad .npy type %d", (int)type);
  char shape[MACE_NPY_MAX_DIMS * 24 + 8];
  size_t o = 0;
  int64_t numel = 1;
  shape[o++] = '(';
  for (int i = 0; i < ndim; i++) {
    if (dims[i] < 0) return fail(err, err_size, "negative dimension %lld", (long long)dims[i]);
    o += (size_t)snprintf(shape + o, sizeof(shape) - o, "%lld,%s", (long long)dims[i],
                          i + 1 < ndim ? " " : "");
    numel *= dims[i];
  }
  if (ndim > 1) o--; /* "(2, 3)" rather than "(2, 3,)"; a 1-tuple keeps its comma */
  snprintf(shape + o, sizeof(shape) - o, ")");

  char header[512];
  int n = snprintf(header, sizeof(header), "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                   mace_npy_type_descr(type), shape);
  if (n < 0 || (size_t)n >= sizeof(header) - 70) return fail(err, err_size, "header too long");
  /* Pad with spaces so magic + version + length + header ends on a 64-byte boundary, '\n' last. */
  size_t total = 10 + (size_t)n + 1;
  size_t padded = (total + 63) / 64 * 64;
  memset(header + n, ' ', padded - total);
  header[n + (padded - total)] = '\n';
  size_t hlen = (size_t)n + (padded - total) + 1;

  unsigned char pre[10];
  memcpy(pre, kMagic, 6);
  pre[6] = 1;
  pre[7] = 0;
  pre[8] = (unsigned char)(hlen & 0xff);
  pre[9] = (unsigned char)(hlen >> 8);

  FILE *f = fopen(path, "wb");
  if (!f) return fail(err, err_size, "cannot create '%s': %s", path, strerror(errno));
  size_t bytes = (size_t)numel * mace_npy_type_size(type);
  int ok = fwrite(pre, 1, sizeof(pre), f) == sizeof(pre) && fwrite(header, 1, hlen, f) == hlen &&
           (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
  if (fclose(f) != 0) ok = 0;
  if (!ok) return fail(err, err_size, "cannot write '%s': %s", path, strerror(errno));
  return 0;
}

static double load_as_double(const mace_npy_array *a, int64_t i) {
  const char *p = (const char *)a->data;
  switch (a->type) {
    case MACE_NPY_F32: { float v; memcpy(&v, p + i * 4, 4); return v; }
    case MACE_NPY_F64: { double v; memcpy(&v, p + i * 8, 8); return v; }
    case MACE_NPY_I64: { int64_t v; memcpy(&v, p + i * 8, 8); return (double)v; }
    case MACE_NPY_I32: { int32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case MACE_NPY_BOOL: return p[i] != 0;
    case MACE_NPY_U8: return (unsigned char)p[i];
    case MACE_NPY_I8: return (signed char)p[i];
  }
  return 0;
}

/* Saturating conversion so out-of-range values do not hit undefined behaviour. */
static int64_t clamp_i64(double v, double lo, double hi) {
  if (v != v) return 0;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return (int64_t)v;
}

int mace_npy_convert_to(const mace_npy_array *a, mace_dtype dtype, void *dst) {
  mace_npy_type t;
  if (mace_npy_type_of(dtype, &t) != 0) return -1;
  if (t == a->type) {
    memcpy(dst, a->data, (size_t)a->numel * a->itemsize);
    return 0;
  }
  for (int64_t i = 0; i < a->numel; i++) {
    double v = load_as_double(a, i);
    switch (dtype) {
      case MACE_DT_F32: ((float *)dst)[i] = (float)v; break;
      case MACE_DT_I32: ((int32_t *)dst)[i] = (int32_t)clamp_i64(v, INT32_MIN, INT32_MAX); break;
      case MACE_DT_I64:
        ((int64_t *)dst)[i] = clamp_i64(v, -9223372036854775808.0, 9223372036854774784.0);
        break;
      case MACE_DT_U8: ((uint8_t *)dst)[i] = (uint8_t)clamp_i64(v, 0, 255); break;
      case MACE_DT_I8: ((int8_t *)dst)[i] = (int8_t)clamp_i64(v, -128, 127); break;
      case MACE_DT_BOOL: ((uint8_t *)dst)[i] = v != 0; break;
      default: return -1;
    }
  }
  return 0;
}
