/* mace_crc32_update (core/checksum.c) against a bit-at-a-time CRC-32 over every length to 300
 * at every alignment to 16, chained updates, a large buffer and the standard check value: the
 * carry-less multiplication path (x86-64 with PCLMULQDQ) and the tables must agree bit for
 * bit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/checksum.h"
#include "test_util.h"

static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n) {
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

int main(void) {
  CHECK(mace_crc32_update(0, "123456789", 9) == 0xCBF43926u, "check value %08x",
        mace_crc32_update(0, "123456789", 9));
  enum { BIG = (1 << 20) + 77 };
  uint8_t *buf = malloc(BIG + 16);
  uint32_t seed = 12345;
  for (size_t i = 0; i < BIG + 16; ++i) {
    seed = seed * 1103515245u + 12345u;
    buf[i] = (uint8_t)(seed >> 16);
  }
  int bad = 0;
  for (size_t off = 0; off < 16 && !bad; ++off)
    for (size_t n = 0; n <= 300 && !bad; ++n) {
      const uint32_t want = crc_bitwise(0x1234567u, buf + off, n);
      const uint32_t got = mace_crc32_update(0x1234567u, buf + off, n);
      if (got != want) {
        FAIL("offset %zu length %zu: %08x, bitwise %08x", off, n, got, want);
        bad = 1;
      }
    }
  const uint32_t whole = crc_bitwise(0, buf + 3, BIG);
  CHECK(mace_crc32_update(0, buf + 3, BIG) == whole, "1 MiB buffer");
  uint32_t chained = 0;
  for (size_t at = 0; at < BIG;) {  /* uneven pieces, some under 64 bytes */
    const size_t piece = at % 7 ? 4093 : 31;
    const size_t n = BIG - at < piece ? BIG - at : piece;
    chained = mace_crc32_update(chained, buf + 3 + at, n);
    at += n;
  }
  CHECK(chained == whole, "chained updates %08x, whole %08x", chained, whole);
  free(buf);
  return TEST_FINISH("crc32");
}
