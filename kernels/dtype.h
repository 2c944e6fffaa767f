/* Element types of weights and the KV cache, and bf16 <-> f32 conversion.
 * bf16 is stored as uint16_t (the top half of an IEEE f32); f32 -> bf16 rounds to nearest even and keeps
 * NaN a (quiet) NaN. Checked against hand-computed bit patterns in tests/test_dtype.c.
 * Q8_0 and Q4_0 are block formats of matrix weights only (kernels/quant.h): 32 weights a block; Q4_K, Q5_K
 * and Q6_K are llama.cpp's K-quants (kernels/quant_k.h): 256 weights a superblock, rows unpacked. */
#ifndef FR_DTYPE_H
#define FR_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum fr_dtype {
    FR_DTYPE_BF16,
    FR_DTYPE_F32,
    FR_DTYPE_Q8_0,
    FR_DTYPE_Q4_0,
    FR_DTYPE_Q4_K,
    FR_DTYPE_Q5_K,
    FR_DTYPE_Q6_K,
    FR_DTYPE_COUNT
};

/* Whether t is a block format (32 weights and one f16 scale a block). */
static inline int fr_dtype_is_block(enum fr_dtype t) {
    return t == FR_DTYPE_Q8_0 || t == FR_DTYPE_Q4_0;
}
/* Whether t is a K-quant (256 weights a superblock). */
static inline int fr_dtype_is_kquant(enum fr_dtype t) {
    return t == FR_DTYPE_Q4_K || t == FR_DTYPE_Q5_K || t == FR_DTYPE_Q6_K;
}
/* Whether t is quantised (a block format or a K-quant): a matrix-only type, never the KV cache's. */
static inline int fr_dtype_is_quant(enum fr_dtype t) {
    return fr_dtype_is_block(t) || fr_dtype_is_kquant(t);
}
/* Weights a block of t holds: 32, 256, or 1 for an element type. */
static inline size_t fr_dtype_block_elems(enum fr_dtype t) {
    return fr_dtype_is_kquant(t) ? 256 : fr_dtype_is_block(t) ? 32 : 1;
}
/* Bytes of one element of an element type. A block format's bytes come from fr_dtype_bytes only; this
 * says 1 for them, never 0, so that no caller can divide by it. */
static inline size_t fr_dtype_size(enum fr_dtype t) {
    return t == FR_DTYPE_BF16 ? 2 : t == FR_DTYPE_F32 ? 4 : 1;
}
/* Bytes of n elements; n a multiple of the type's block (34 bytes a Q8_0 block, 18 a Q4_0 one; 144, 176 and
 * 210 a Q4_K, Q5_K, Q6_K superblock). */
static inline size_t fr_dtype_bytes(enum fr_dtype t, size_t n) {
    switch (t) {
    case FR_DTYPE_Q8_0:
        return n / 32 * 34;
    case FR_DTYPE_Q4_0:
        return n / 32 * 18;
    case FR_DTYPE_Q4_K:
        return n / 256 * 144;
    case FR_DTYPE_Q5_K:
        return n / 256 * 176;
    case FR_DTYPE_Q6_K:
        return n / 256 * 210;
    default:
        return n * fr_dtype_size(t);
    }
}
/* Bytes a weight of t costs, scales counted (Q4_K: 4.5 bits). */
static inline double fr_dtype_weight_bytes(enum fr_dtype t) {
    return (double)fr_dtype_bytes(t, 256) / 256.0;
}
static inline const char *fr_dtype_name(enum fr_dtype t) {
    static const char *const names[] = {"bf16", "f32", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

/* Parses "bf16" or "f32" (the element types, for the KV cache and logits); returns 0 on success. */
static inline int fr_dtype_parse(const char *s, enum fr_dtype *out) {
    if (strcmp(s, "bf16") == 0)
        *out = FR_DTYPE_BF16;
    else if (strcmp(s, "f32") == 0)
        *out = FR_DTYPE_F32;
    else
        return -1;
    return 0;
}

/* Parses a weight type a kernel runs: an element type or a quantised one ("q8_0", "q4_k"); returns 0 on
 * success. */
static inline int fr_wtype_parse(const char *s, enum fr_dtype *out) {
    static const enum fr_dtype quant[] = {FR_DTYPE_Q8_0, FR_DTYPE_Q4_0, FR_DTYPE_Q4_K, FR_DTYPE_Q5_K,
                                          FR_DTYPE_Q6_K};
    for (size_t i = 0; i < sizeof quant / sizeof quant[0]; i++)
        if (strcmp(s, fr_dtype_name(quant[i])) == 0) {
            *out = quant[i];
            return 0;
        }
    return fr_dtype_parse(s, out);
}

static inline float bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t bf16_from_f32(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* NaN stays NaN */
    u += 0x7fffu + ((u >> 16) & 1u);                                             /* nearest even */
    return (uint16_t)(u >> 16);
}

#endif
