/* Seeded logit rows (see sampler_rows.h). The realistic kind follows the shape of an LM head's output at
 * decode: a normal bulk (sd 2.5) and 1-8 tokens up to 8 above the bulk's largest value. */
#include "bench/sampler_rows.h"

#include <math.h>

uint64_t sampler_rows_next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double sampler_rows_uniform(uint64_t *state) {
    return (double)(sampler_rows_next(state) >> 11) * 0x1p-53;
}

double sampler_rows_normal(uint64_t *state) {
    double u1 = sampler_rows_uniform(state), u2 = sampler_rows_uniform(state);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

const char *sampler_row_kind_name(enum sampler_row_kind kind) {
    switch (kind) {
    case SAMPLER_ROW_REALISTIC:
        return "realistic";
    case SAMPLER_ROW_FLAT:
        return "flat";
    case SAMPLER_ROW_TIES:
        return "ties";
    default:
        return "?";
    }
}

void sampler_rows_fill(float *logits, int n, enum sampler_row_kind kind, uint64_t seed) {
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + (uint64_t)kind;
    double top = -INFINITY;
    for (int i = 0; i < n; i++) {
        double v;
        if (kind == SAMPLER_ROW_FLAT)
            v = 0.05 * sampler_rows_normal(&s);
        else if (kind == SAMPLER_ROW_TIES)
            v = (double)(sampler_rows_next(&s) % 6);
        else
            v = 2.5 * sampler_rows_normal(&s);
        logits[i] = (float)v;
        if (v > top) top = v;
    }
    if (kind != SAMPLER_ROW_REALISTIC) return;
    int peaks = 1 + (int)(sampler_rows_next(&s) % 8);
    for (int j = 0; j < peaks; j++) {
        int at = (int)(sampler_rows_next(&s) % (uint64_t)n);
        logits[at] = (float)(top + 8.0 * sampler_rows_uniform(&s));
    }
}
