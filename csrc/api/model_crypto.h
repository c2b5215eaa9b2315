/* Encrypted models (`mace encrypt`, docs/encryption.md): the container format and its in-memory decryption. */
#ifndef MACE_API_MODEL_CRYPTO_H_
#define MACE_API_MODEL_CRYPTO_H_

#include <stddef.h>
#include <stdint.h>

#include "mace/mace.h"

/* An encrypted .pb or .data is, byte by byte (python/mace/encrypt.py writes the same):
 *   header  16 bytes: "MACEENC" 0x01, a kind byte ('G' graph, 'W' weights), 7 zero bytes
 *   nonce   12 bytes (random per file)
 *   ciphertext of the plain file (as many bytes as it has)
 *   tag     16 bytes
 * AES-256-GCM with the 32-byte key, the header as additional authenticated data (a graph
 * cannot pass for weights, nor a header be edited). */
#define MACE_ENC_HEADER_BYTES 16
#define MACE_ENC_NONCE_BYTES 12
#define MACE_ENC_TAG_BYTES 16
#define MACE_ENC_KEY_BYTES 32
#define MACE_ENC_OVERHEAD (MACE_ENC_HEADER_BYTES + MACE_ENC_NONCE_BYTES + MACE_ENC_TAG_BYTES)

/* 1 when `data` starts with the encrypted-model header. */
int mace_model_is_encrypted(const void *data, size_t size);

/* Decrypts whichever of graph and weights is encrypted with config->decrypt_key. On MACE_OK,
 * *plain_graph (malloc'd; the caller frees it) is set when the graph was encrypted and NULL
 * otherwise, and *plain_weights (mace_filter_alloc'd, 64-byte aligned; freed with
 * mace_aligned_free) likewise. A wrong key or altered bytes is MACE_INVALID_MODEL; an encrypted
 * model without a key is MACE_INVALID_ARGS; a build without OpenSSL's libcrypto is
 * MACE_UNSUPPORTED. The key is never logged nor put in a message. */
mace_status mace_model_decrypt(const void *graph, size_t graph_size, const void *weights,
                               size_t weights_size, const mace_config *config,
                               uint8_t **plain_graph, size_t *plain_graph_size,
                               uint8_t **plain_weights, size_t *plain_weights_size);

#endif /* MACE_API_MODEL_CRYPTO_H_ */
