/* In-memory decryption of encrypted models (AES-256-GCM through OpenSSL's libcrypto when built with it). */
#include "api/model_crypto.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor.h"

#if MACE_HAVE_OPENSSL
#include <openssl/evp.h>
#endif

static const uint8_t k_magic[8] = {'M', 'A', 'C', 'E', 'E', 'N', 'C', 1};

int mace_model_is_encrypted(const void *data, size_t size) {
  return data && size >= sizeof(k_magic) && memcmp(data, k_magic, sizeof(k_magic)) == 0;
}

#if MACE_HAVE_OPENSSL
/* Decrypts one container of `kind` into out (plain bytes, size - MACE_ENC_OVERHEAD of them). */
static mace_status decrypt_one(const uint8_t *in, size_t size, char kind, const uint8_t *key,
                               uint8_t *out, const char *what) {
  mace_status st = MACE_OK;
  EVP_CIPHER_CTX *ctx = NULL;
  const uint8_t *nonce = in + MACE_ENC_HEADER_BYTES;
  const uint8_t *body = nonce + MACE_ENC_NONCE_BYTES;
  size_t n = size - MACE_ENC_OVERHEAD;
  const uint8_t *tag = body + n;
  int len = 0;
  if (in[8] != (uint8_t)kind) {
    st = mace_error(MACE_INVALID_MODEL, "the encrypted %s is not encrypted %s (kind '%c')", what,
                    what, in[8] >= 32 && in[8] < 127 ? in[8] : '?');
    goto done;
  }
  if (n > (size_t)0x7fffffff) {
    st = mace_error(MACE_UNSUPPORTED, "the encrypted %s is larger than 2 GiB", what);
    goto done;
  }
  ctx = EVP_CIPHER_CTX_new();
  if (!ctx) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "out of memory decrypting the %s", what);
    goto done;
  }
  if (EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, MACE_ENC_NONCE_BYTES, NULL) != 1 ||
      EVP_DecryptInit_ex(ctx, NULL, NULL, key, nonce) != 1 ||
      EVP_DecryptUpdate(ctx, NULL, &len, in, MACE_ENC_HEADER_BYTES) != 1 ||
      (n && EVP_DecryptUpdate(ctx, out, &len, body, (int)n) != 1) ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, MACE_ENC_TAG_BYTES, (void *)tag) != 1) {
    st = mace_error(MACE_RUNTIME_ERROR, "libcrypto failed to set up decrypting the %s", what);
    goto done;
  }
  if (EVP_DecryptFinal_ex(ctx, out + len, &len) != 1)
    st = mace_error(MACE_INVALID_MODEL, "cannot decrypt the %s: wrong key, or the file was "
                    "altered (AES-256-GCM authentication failed)", what);
done:
  EVP_CIPHER_CTX_free(ctx);
  return st;
}
#endif

/* One buffer: nothing when plain; else checks and decrypts into *out (alloc'd by `aligned`). */
static mace_status decrypt_buffer(const void *data, size_t size, char kind, const mace_config *cfg,
                                  int aligned, uint8_t **out, size_t *out_size, const char *what) {
  *out = NULL;
  *out_size = 0;
  if (!mace_model_is_encrypted(data, size)) return MACE_OK;
#if !MACE_HAVE_OPENSSL
  (void)kind;
  (void)aligned;
  (void)cfg;
  return mace_error(MACE_UNSUPPORTED, "the %s is encrypted, and this build of mace has no "
                    "decryption (built without OpenSSL's libcrypto)", what);
#else
  if (size < MACE_ENC_OVERHEAD)
    return mace_error(MACE_INVALID_MODEL, "the encrypted %s is truncated (%zu bytes)", what, size);
  if (!cfg || !cfg->decrypt_key)
    return mace_error(MACE_INVALID_ARGS, "the %s is encrypted (mace encrypt): give its key in "
                      "mace_config.decrypt_key", what);
  if (cfg->decrypt_key_size != MACE_ENC_KEY_BYTES)
    return mace_error(MACE_INVALID_ARGS, "mace_config.decrypt_key_size is %zu; AES-256 keys are "
                      "%d bytes", cfg->decrypt_key_size, MACE_ENC_KEY_BYTES);
  size_t n = size - MACE_ENC_OVERHEAD;
  uint8_t *buf = aligned ? mace_filter_alloc(n ? n : 1) : malloc(n ? n : 1);
  if (!buf) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory decrypting the %s", what);
  mace_status st = decrypt_one(data, size, kind, cfg->decrypt_key, buf, what);
  if (st != MACE_OK) {
    if (aligned)
      mace_aligned_free(buf);
    else
      free(buf);
    return st;
  }
  *out = buf;
  *out_size = n;
  return MACE_OK;
#endif
}

mace_status mace_model_decrypt(const void *graph, size_t graph_size, const void *weights,
                               size_t weights_size, const mace_config *config,
                               uint8_t **plain_graph, size_t *plain_graph_size,
                               uint8_t **plain_weights, size_t *plain_weights_size) {
  MACE_RETURN_IF_ERROR(decrypt_buffer(graph, graph_size, 'G', config, 0, plain_graph,
                                      plain_graph_size, "graph"));
  mace_status st = decrypt_buffer(weights, weights_size, 'W', config, 1, plain_weights,
                                  plain_weights_size, "weights");
  if (st != MACE_OK) {
    free(*plain_graph);
    *plain_graph = NULL;
  }
  return st;
}
