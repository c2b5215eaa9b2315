/* Reference (portable C) dtype-generic ChannelShuffle over NCHW (or [N, C, ...]). */
#include "kernels/cpu/ref/channel_shuffle.h"

#include <string.h>

void mace_x_channel_shuffle__ref(const void *in, int64_t c, int64_t groups, int64_t plane_bytes,
                                 void *out, int64_t begin, int64_t end) {
  const int64_t cpg = c / groups;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t ni = t / c, oc = t % c;
    const int64_t i = oc / groups, g = oc % groups;
    const int64_t ic = g * cpg + i;
    memcpy((char *)out + t * plane_bytes, (const char *)in + (ni * c + ic) * plane_bytes,
           (size_t)plane_bytes);
  }
}
