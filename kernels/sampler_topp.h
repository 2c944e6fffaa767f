/* The top-p filter (kernels/sampler_topp.c; sampler.h includes this), and privately to the sampler the fast
 * filter's full entry, which sampler_pick (sampler.c) fuses with the passes around it: the softmax's last
 * step (scaling exp values to probabilities) runs inside the filter's first pass, and the filter's last pass
 * leaves the draw its block sums. Layering: sampler.c -> sampler_topp.h -> (sampler_topp.c) ->
 * sampler_simd.h; nothing here includes sampler.c's declarations. */
#ifndef FR_SAMPLER_TOPP_H
#define FR_SAMPLER_TOPP_H

#include <stddef.h>
#include <stdint.h>

/* Top-p in place over probs[n] (checked with sampler_check_probs first); returns the nucleus size.
 * The reference sorts the whole row (qsort); the fast one never does, and is bit-identical to it at every
 * size up to 2^26 tokens. */
size_t sampler_top_p_scratch_bytes(int n);
int sampler_top_p_ref(float *probs, int n, float top_p, void *scratch);
int sampler_top_p_fast(float *probs, int n, float top_p, void *scratch);
/* The same, writing out[n] and leaving probs as it is (out may equal probs). */
int sampler_top_p_ref_into(float *out, const float *probs, int n, float top_p, void *scratch);
int sampler_top_p_fast_into(float *out, const float *probs, int n, float top_p, void *scratch);

struct sampler_topp_in {
    const float *probs; /* [n] probabilities, or exp values to be scaled by r (scaled != NULL) */
    float *scaled;      /* NULL, or probs itself: probs[i] * r is written there first and filtered */
    float r;            /* with scaled: the softmax's reciprocal sum */
    const float *mass;  /* NULL, or the level masses of probs (sampler_simd.h, before any scaling) */
    double mass_total;  /* what mass is a share of: 1 for probabilities, the exp sum for exp values */
    long *binned;       /* NULL, or += the tokens the filter histogrammed (its own work: tests read it) */
};

/* The draw's CDF, as the filter's last pass leaves it: sums[b] = the b-th 16-token block sum of the
 * output (sampler_block_sum16), total = their sum in block order, last = the last positive index. */
struct sampler_draw_blocks {
    double *sums; /* [ceil(n / 16)] */
    double total; /* < 0: not computed (top_p >= 1 returns before the last pass) */
    int last;
};

/* The fast filter of sampler.h on in->probs (scaled first where asked), into out[n] (out may be
 * in->probs). With blocks, blocks->sums must hold ceil(n / 16) doubles; they are filled when the filter
 * runs its last pass (top_p < 1), else blocks->total = -1. Returns the nucleus size. */
int sampler_top_p_fast_fused(float *out, const struct sampler_topp_in *in, int n, float top_p, void *scratch,
                             struct sampler_draw_blocks *blocks);

#endif
