/* Reference (portable C) dtype-generic ChannelShuffle over NCHW (or [N, C, ...]). */
#ifndef MACE_KERNELS_CPU_REF_CHANNEL_SHUFFLE_H_
#define MACE_KERNELS_CPU_REF_CHANNEL_SHUFFLE_H_

#include <stdint.h>

/* in viewed as [n, groups, c / groups, plane_bytes]; out as [n, c / groups, groups, plane_bytes]:
 *   out[ni, i * groups + g] = in[ni, g * (c / groups) + i]
 * Computes output channels [begin, end) of the n * c channels. */
void mace_x_channel_shuffle__ref(const void *in, int64_t c, int64_t groups, int64_t plane_bytes,
                                 void *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_CHANNEL_SHUFFLE_H_ */
