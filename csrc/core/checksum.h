/* CRC-32 of byte buffers and the check of a model's recorded checksums (proto/mace.proto). */
#ifndef MACE_CORE_CHECKSUM_H_
#define MACE_CORE_CHECKSUM_H_

#include <stddef.h>
#include <stdint.h>

#include "mace/mace.h"

/* CRC-32 (the zlib / IEEE 802.3 polynomial, reflected, 0xEDB88320) of `size` bytes, continuing
 * from `crc` (0 to start): mace_crc32_update(0, b, n) equals Python's zlib.crc32(b). */
uint32_t mace_crc32_update(uint32_t crc, const void *data, size_t size);

/* Checks the checksums a NetDef records (NetDef.weights_crc32 and the graph_crc32 trailer)
 * against the graph bytes and the whole weights blob. A model that records neither is
 * accepted as it is (files written before checksums existed); one that records only one of
 * them, or whose trailer is not the last field, is refused. `graph_name` names the model in
 * the error (a path, or NULL). Fails with MACE_INVALID_MODEL naming what mismatched. */
mace_status mace_model_verify_checksums(const uint8_t *graph, size_t graph_size,
                                        const uint8_t *weights, size_t weights_size,
                                        const char *graph_name);

#endif /* MACE_CORE_CHECKSUM_H_ */
