/* CRC-32 (slicing by 8) and the check of the checksums a model file records. */
#include "core/checksum.h"

#include <pthread.h>

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

uint32_t mace_crc32_update(uint32_t crc, const void *data, size_t size) {
  pthread_once(&crc_once, crc_table_init);
  const uint8_t *p = data;
  uint32_t c = ~crc;
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
