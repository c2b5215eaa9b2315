/* Reference (portable C) negative log-likelihood loss over class scores (f32). */
#ifndef MACE_KERNELS_CPU_REF_NLL_LOSS_H_
#define MACE_KERNELS_CPU_REF_NLL_LOSS_H_
#include <stdint.h>

/* x viewed as [batch, classes, inner], targets as [batch, inner] (int64 when t_is_i64, else
 * int32), weight [classes] or NULL (all 1). For positions [begin, end) of batch * inner:
 *   loss[p] = -x[b, t[p], i] * weight[t[p]],  w_out[p] = weight[t[p]]
 * and 0 for both where has_ignore and t[p] == ignore_index. w_out may be NULL. */
void mace_f32_nll_loss__ref(const float *x, const void *t, int t_is_i64, const float *weight,
                            int64_t classes, int64_t inner, int has_ignore, int64_t ignore_index,
                            float *loss, float *w_out, int64_t begin, int64_t end);

/* First position in [0, n) whose target is outside [0, classes) and is not the ignored
 * index, or -1 when every target is valid. */
int64_t mace_nll_loss_find_bad_target(const void *t, int t_is_i64, int64_t n, int64_t classes,
                                      int has_ignore, int64_t ignore_index);
#endif /* MACE_KERNELS_CPU_REF_NLL_LOSS_H_ */
