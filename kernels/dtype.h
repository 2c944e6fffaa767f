/* Element types of weights and the KV cache, and bf16 <-> f32 conversion.
 * bf16 is stored as uint16_t (the top half of an IEEE f32); f32 -> bf16 rounds to nearest even and keeps
 * NaN a (quiet) NaN. Checked against hand-computed bit patterns in tests/test_dtype.c. */
#ifndef FR_DTYPE_H
#define FR_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum fr_dtype { FR_DTYPE_BF16, FR_DTYPE_F32 };

static inline size_t fr_dtype_size(enum fr_dtype t) {
    return t == FR_DTYPE_BF16 ? 2 : 4;
}
static inline const char *fr_dtype_name(enum fr_dtype t) {
    return t == FR_DTYPE_BF16 ? "bf16" : "f32";
}

/* Parses "bf16" or "f32"; returns 0 on success. */
static inline int fr_dtype_parse(const char *s, enum fr_dtype *out) {
    if (strcmp(s, "bf16") == 0)
        *out = FR_DTYPE_BF16;
    else if (strcmp(s, "f32") == 0)
        *out = FR_DTYPE_F32;
    else
        return -1;
    return 0;
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
