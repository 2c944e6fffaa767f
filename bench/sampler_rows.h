/* Seeded logit rows for the sampler's checks and benchmark: the same seed gives the same row everywhere
 * (splitmix64 + Box-Muller in double, rounded once to f32). */
#ifndef FR_SAMPLER_ROWS_H
#define FR_SAMPLER_ROWS_H

#include <stdint.h>

enum sampler_row_kind {
    SAMPLER_ROW_REALISTIC, /* a few high logits over a wide normal tail, like an LM head's output */
    SAMPLER_ROW_FLAT,      /* a narrow normal: the nucleus is most of the vocabulary */
    SAMPLER_ROW_TIES,      /* logits from 6 levels: long runs of equal probabilities */
    SAMPLER_ROW_KIND_COUNT,
};

const char *sampler_row_kind_name(enum sampler_row_kind kind);
/* logits[n] of the given kind from seed */
void sampler_rows_fill(float *logits, int n, enum sampler_row_kind kind, uint64_t seed);
/* the generator itself: next 64 bits, uniform in [0, 1), standard normal */
uint64_t sampler_rows_next(uint64_t *state);
double sampler_rows_uniform(uint64_t *state);
double sampler_rows_normal(uint64_t *state);

#endif
