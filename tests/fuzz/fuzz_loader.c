/* libFuzzer harness: mace_engine_create_from_buffers on fuzzed graph + weights bytes, then one run
 * of whatever loads on zero inputs. Input: "MACF", u32 graph size, graph, weights (fuzz_common.h);
 * any other input is taken as graph bytes alone with no weights. */
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *graph = data, *weights = NULL;
  size_t graph_size = size, weights_size = 0;
  if (size >= 8 && memcmp(data, FUZZ_MAGIC, 4) == 0) {
    uint32_t g = (uint32_t)data[4] | (uint32_t)data[5] << 8 | (uint32_t)data[6] << 16 |
                 (uint32_t)data[7] << 24;
    graph = data + 8;
    graph_size = g <= size - 8 ? g : size - 8;
    weights = graph + graph_size;
    weights_size = size - 8 - graph_size;
  }
  mace_config cfg;
  mace_config_init(&cfg);
  cfg.num_threads = 1;
  cfg.skip_checksum = 1;  /* a checksum would reject nearly every mutation before the parser */
  mace_engine *eng = NULL;
  if (mace_engine_create_from_buffers(graph, graph_size, weights, weights_size, &cfg, &eng) ==
      MACE_OK) {
    fuzz_run_zeros(eng);
    mace_engine_destroy(eng);
  }
  return 0;
}
