/* Dequantisers of the block formats a file may hold and no kernel runs (kernels/quant_dequant.h): plain
 * scalar C from ggml-common.h's layouts. Each weight is computed as llama.cpp's dequantize_row_* and
 * gguf-py's dequantize_blocks compute it (the scale products first, in f32, then one multiply and one add),
 * so both give the same bits: checked in tests/test_gguf_kquant.c on llama-quantize's files. */
#include "kernels/quant_dequant.h"

#include <string.h>

#include "kernels/quant.h"

static const struct quant_file_format formats[QUANT_FILE_COUNT] = {
    [QUANT_FILE_Q4_1] = {"q4_1", 32, 20, 2, {{0, "d"}, {2, "m"}}},
    [QUANT_FILE_Q5_0] = {"q5_0", 32, 22, 1, {{0, "d"}, {0, ""}}},
    [QUANT_FILE_Q5_1] = {"q5_1", 32, 24, 2, {{0, "d"}, {2, "m"}}},
    [QUANT_FILE_Q4_K] = {"q4_k", 256, 144, 2, {{0, "d"}, {2, "dmin"}}},
    [QUANT_FILE_Q5_K] = {"q5_k", 256, 176, 2, {{0, "d"}, {2, "dmin"}}},
    [QUANT_FILE_Q6_K] = {"q6_k", 256, 210, 1, {{208, "d"}, {0, ""}}},
};

const struct quant_file_format *quant_file_format(enum quant_file_type t) {
    return &formats[t];
}

static float f16_at(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, sizeof h); /* little-endian file on a little-endian host */
    return quant_f16_to_f32(h);
}

/* Q4_1, Q5_0, Q5_1 (32 weights): byte i of the nibbles holds weight i low and weight 16 + i high; Q5's qh
 * (a little-endian uint32) holds weight i's fifth bit at bit i. */
static void dequantize_32(float *o, enum quant_file_type t, const uint8_t *b) {
    const int has_m = t != QUANT_FILE_Q5_0, has_qh = t != QUANT_FILE_Q4_1;
    const float d = f16_at(b), m = has_m ? f16_at(b + 2) : 0.0f;
    const uint8_t *qs = b + 2 + 2 * has_m + 4 * has_qh;
    uint32_t qh = 0;
    if (has_qh) memcpy(&qh, b + 2 + 2 * has_m, sizeof qh);
    for (int i = 0; i < 32; i++) {
        int q = (i < 16 ? qs[i] : qs[i - 16] >> 4) & 0xf;
        q |= (int)(qh >> i & 1) << 4;
        o[i] = t == QUANT_FILE_Q5_0 ? d * (float)(q - 16) : d * (float)q + m;
    }
}

void quant_q4_k_scale_min(const uint8_t scales[12], int j, int *sc, int *m) {
    const int k = j & 3; /* bytes k, k + 4 and k + 8 hold sub-blocks k and k + 4 */
    if (j < 4) {
        *sc = scales[k] & 63;
        *m = scales[k + 4] & 63;
    } else {
        *sc = (scales[k + 8] & 0xf) | (scales[k] >> 6) << 4;
        *m = (scales[k + 8] >> 4) | (scales[k + 4] >> 6) << 4;
    }
}

/* Q4_K, Q5_K (256 weights in 8 sub-blocks of 32): sub-block s's weight j has its low 4 bits in byte
 * 32 (s / 2) + j of the nibbles (low nibble for even s) and, in Q5_K, its fifth bit at bit s of qh[j]. */
static void dequantize_k45(float *o, int five, const uint8_t *b) {
    const float d = f16_at(b), dmin = f16_at(b + 2);
    const uint8_t *sc = b + 4, *qh = b + 16, *qs = b + 16 + 32 * five;
    for (int s = 0; s < 8; s++) {
        int scale, min;
        quant_q4_k_scale_min(sc, s, &scale, &min);
        const float d1 = d * (float)scale, m1 = dmin * (float)min;
        for (int j = 0; j < 32; j++) {
            int q = qs[32 * (s / 2) + j] >> (4 * (s & 1)) & 0xf;
            if (five) q |= (qh[j] >> s & 1) << 4;
            o[32 * s + j] = d1 * (float)q - m1;
        }
    }
}

/* Q6_K: within each half of 128 weights, ql's 64 bytes hold weight e's low 4 bits (weights 0-63 in the low
 * nibbles, 64-127 in the high ones) and qh's 32 bytes its high 2 bits (weights 0-31 in bits 0-1, 32-63 in
 * bits 2-3, and so on). */
static void dequantize_q6_k(float *o, const uint8_t *b) {
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *scales = (const int8_t *)(const void *)(b + 192);
    const float d = f16_at(b + 208);
    for (int e = 0; e < 256; e++) {
        int half = e / 128, j = e % 128;
        int lo = ql[half * 64 + j % 64] >> (j < 64 ? 0 : 4) & 0xf;
        int hi = qh[half * 32 + j % 32] >> (2 * (j / 32)) & 3;
        o[e] = d * (float)scales[e / 16] * (float)((lo | hi << 4) - 32);
    }
}

void quant_dequantize_file(float *dst, enum quant_file_type t, const void *src, size_t n) {
    const struct quant_file_format *f = &formats[t];
    for (size_t k = 0; k < n / (size_t)f->block; k++) {
        const uint8_t *b = (const uint8_t *)src + k * (size_t)f->bytes;
        float *o = dst + k * (size_t)f->block;
        if (t == QUANT_FILE_Q6_K)
            dequantize_q6_k(o, b);
        else if (t == QUANT_FILE_Q4_K || t == QUANT_FILE_Q5_K)
            dequantize_k45(o, t == QUANT_FILE_Q5_K, b);
        else
            dequantize_32(o, t, b);
    }
}

int quant_file_check_scales(enum quant_file_type t, const void *src, size_t n_blocks, size_t *block,
                            int *field, uint16_t *bits) {
    const struct quant_file_format *f = &formats[t];
    for (size_t k = 0; k < n_blocks; k++)
        for (int i = 0; i < f->n_scales; i++) {
            uint16_t h;
            memcpy(&h, (const uint8_t *)src + k * (size_t)f->bytes + f->scales[i].off, sizeof h);
            if ((h & 0x7c00) == 0x7c00) { /* f16 exponent all ones: infinity or NaN */
                *block = k;
                *field = i;
                *bits = h;
                return -1;
            }
        }
    return 0;
}
