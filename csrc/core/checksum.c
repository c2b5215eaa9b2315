/* CRC-32 (slicing by 8; carry-less multiplication folding on x86-64 with PCLMULQDQ) and the
 * check of the checksums a model file records. */
#include "core/checksum.h"

#include <pthread.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MACE_CRC32_CLMUL 1
#endif

#include "core/status.h"

/* NetDef field numbers (proto/mace.proto). */
#define FIELD_WEIGHTS_CRC32 8
#define FIELD_GRAPH_CRC32 1000
#define WIRE_VARINT 0
#define WIRE_FIXED64 1
#define WIRE_LEN 2
#define WIRE_FIXED32 5

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_table_init(void) {
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i)
    for (int t = 1; t < 8; ++t)
      crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
}

#ifdef MACE_CRC32_CLMUL
/* The CRC register c (already inverted) after `len` bytes (len >= 64, a multiple of 16): four
 * 128-bit lanes folded 64 bytes a step by carry-less multiplication, folded into one, reduced
 * to 64 and then 32 bits by Barrett reduction (Intel, "Fast CRC Computation for Generic
 * Polynomials Using PCLMULQDQ", the bit-reflected constants of the 0xEDB88320 polynomial, as
 * zlib's Chromium port). The weights of a large model are checked at every engine creation:
 * this runs many times faster than the tables. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc32_clmul(uint32_t c, const uint8_t *p,
                                                                     size_t len) {
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
  const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124LL);
  const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
  __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 0x00));
  __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 0x10));
  __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 0x20));
  __m128i x4 = _mm_loadu_si128((const __m128i *)(p + 0x30));
  x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)c));
  p += 64;
  len -= 64;
  while (len >= 64) {
    const __m128i x5 = _mm_clmulepi64_si128(x1, k1k2, 0x00);
    const __m128i x6 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
    const __m128i x7 = _mm_clmulepi64_si128(x3, k1k2, 0x00);
    const __m128i x8 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k1k2, 0x11);
    x2 = _mm_clmulepi64_si128(x2, k1k2, 0x11);
    x3 = _mm_clmulepi64_si128(x3, k1k2, 0x11);
    x4 = _mm_clmulepi64_si128(x4, k1k2, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), _mm_loadu_si128((const __m128i *)(p + 0x00)));
    x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), _mm_loadu_si128((const __m128i *)(p + 0x10)));
    x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), _mm_loadu_si128((const __m128i *)(p + 0x20)));
    x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), _mm_loadu_si128((const __m128i *)(p + 0x30)));
    p += 64;
    len -= 64;
  }
  /* four lanes into one */
  const __m128i lanes[3] = {x2, x3, x4};
  for (int i = 0; i < 3; ++i) {
    const __m128i x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), lanes[i]), x5);
  }
  while (len >= 16) {
    const __m128i x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11),
                                     _mm_loadu_si128((const __m128i *)p)),
                       x5);
    p += 16;
    len -= 16;
  }
  /* 128 -> 64 bits */
  const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
  __m128i x2b = _mm_clmulepi64_si128(x1, k3k4, 0x10);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2b);
  x2b = _mm_srli_si128(x1, 4);
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5k0, 0x00), x2b);
  /* Barrett reduction to 32 bits */
  x2b = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
  x2b = _mm_clmulepi64_si128(_mm_and_si128(x2b, mask32), poly, 0x00);
  x1 = _mm_xor_si128(x1, x2b);
  return (uint32_t)_mm_extract_epi32(x1, 1);
}

static int have_clmul;

static void crc_clmul_init(void) {
  __builtin_cpu_init();
  have_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}
#endif

uint32_t mace_crc32_update(uint32_t crc, const void *data, size_t size) {
  pthread_once(&crc_once, crc_table_init);
  const uint8_t *p = data;
  uint32_t c = ~crc;
#ifdef MACE_CRC32_CLMUL
  static pthread_once_t clmul_once = PTHREAD_ONCE_INIT;
  pthread_once(&clmul_once, crc_clmul_init);
  if (have_clmul && size >= 64) {
    const size_t chunk = size & ~(size_t)15;
    c = crc32_clmul(c, p, chunk);
    p += chunk;
    size -= chunk;
  }
#endif
  /* Eight bytes a step through eight tables; the words are assembled byte by byte, so the
   * result does not depend on the host's byte order or on alignment. */
  while (size >= 8) {
    uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                       (uint32_t)p[3] << 24);
    c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^
        crc_table[5][(lo >> 16) & 0xFF] ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^
        crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
    p += 8;
    size -= 8;
  }
  while (size--) c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xFF];
  return ~c;
}

/* Reads a varint at *pos (< end); 0 when it is malformed or runs past end. */
static int read_varint(const uint8_t *buf, size_t end, size_t *pos, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && *pos < end; shift += 7) {
    uint8_t b = buf[(*pos)++];
    v |= (uint64_t)(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return 1;
    }
  }
  return 0;
}

static uint32_t read_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

mace_status mace_model_verify_checksums(const uint8_t *graph, size_t graph_size,
                                        const uint8_t *weights, size_t weights_size,
                                        const char *graph_name) {
  const char *name = graph_name ? graph_name : "the model";
  int has_weights_crc = 0, has_graph_crc = 0;
  uint32_t weights_crc = 0, graph_crc = 0;
  size_t graph_crc_at = 0, graph_crc_end = 0;
  size_t pos = 0;
  /* Only the top-level fields are walked: the two checksums live there. */
  while (pos < graph_size) {
    size_t field_at = pos;
    uint64_t tag, len;
    if (!read_varint(graph, graph_size, &pos, &tag))
      return mace_error(MACE_INVALID_MODEL, "'%s' is not a mace graph (bad field at byte %zu)",
                        name, field_at);
    uint64_t field = tag >> 3;
    switch (tag & 7) {
      case WIRE_VARINT:
        if (!read_varint(graph, graph_size, &pos, &len))
          return mace_error(MACE_INVALID_MODEL, "'%s' is not a mace graph (bad varint at byte "
                            "%zu)", name, pos);
        break;
      case WIRE_FIXED64:
        if (graph_size - pos < 8)
          return mace_error(MACE_INVALID_MODEL, "'%s' is truncated (byte %zu)", name, pos);
        pos += 8;
        break;
      case WIRE_LEN:
        if (!read_varint(graph, graph_size, &pos, &len) || len > graph_size - pos)
          return mace_error(MACE_INVALID_MODEL, "'%s' is truncated or corrupt (field %llu at "
                            "byte %zu)", name, (unsigned long long)field, field_at);
        pos += (size_t)len;
        break;
      case WIRE_FIXED32:
        if (graph_size - pos < 4)
          return mace_error(MACE_INVALID_MODEL, "'%s' is truncated (byte %zu)", name, pos);
        if (field == FIELD_WEIGHTS_CRC32) {
          has_weights_crc = 1;
          weights_crc = read_le32(graph + pos);
        } else if (field == FIELD_GRAPH_CRC32) {
          has_graph_crc = 1;
          graph_crc = read_le32(graph + pos);
          graph_crc_at = field_at;
          graph_crc_end = pos + 4;
        }
        pos += 4;
        break;
      default:
        return mace_error(MACE_INVALID_MODEL, "'%s' is not a mace graph (wire type %d at byte "
                          "%zu)", name, (int)(tag & 7), field_at);
    }
  }
  if (!has_weights_crc && !has_graph_crc) return MACE_OK; /* written before checksums */
  if (!has_graph_crc)
    return mace_error(MACE_INVALID_MODEL, "'%s' records a weights checksum but no graph "
                      "checksum (graph_crc32): the graph is corrupt", name);
  if (!has_weights_crc)
    return mace_error(MACE_INVALID_MODEL, "'%s' records a graph checksum but no weights "
                      "checksum (weights_crc32): the graph is corrupt", name);
  if (graph_crc_end != graph_size)
    return mace_error(MACE_INVALID_MODEL, "'%s': the graph checksum (graph_crc32) is not the "
                      "last field of the file: the graph is corrupt", name);
  uint32_t got = mace_crc32_update(0, graph, graph_crc_at);
  if (got != graph_crc)
    return mace_error(MACE_INVALID_MODEL, "'%s': graph checksum mismatch (recorded %08x, the "
                      "file's bytes give %08x): the graph file is corrupt", name,
                      (unsigned)graph_crc, (unsigned)got);
  got = mace_crc32_update(0, weights, weights_size);
  if (got != weights_crc)
    return mace_error(MACE_INVALID_MODEL, "'%s': weights checksum mismatch (the graph records "
                      "%08x for %zu weight bytes, they give %08x): the weights file is corrupt "
                      "or belongs to another model", name, (unsigned)weights_crc, weights_size,
                      (unsigned)got);
  return MACE_OK;
}
