/* Layer: kernels/ (bottom of the include graph).
 * llama.cpp's block formats that files hold and no forge kernel runs yet (#67): read only, dequantised to
 * f32 so that a loader can convert a matrix into the run's kernel format (kernels/quant.h). The layouts are
 * ggml-common.h's (block_q4_1, block_q5_0, block_q5_1, block_q4_K, block_q5_K, block_q6_K); the code is our
 * own. Every f16 scale is read exactly and each weight is one or two f32 roundings of it, in the order
 * llama.cpp's dequantize_row_* and gguf-py's numpy dequantisers take, so the values agree bit for bit:
 * checked against gguf-py on files llama-quantize wrote (tests/test_gguf_kquant.c). */
#ifndef FR_QUANT_DEQUANT_H
#define FR_QUANT_DEQUANT_H

#include <stddef.h>
#include <stdint.h>

enum quant_file_type {
    QUANT_FILE_Q4_1, /* 32 weights, 20 bytes: f16 d, f16 m, 16 bytes of nibbles; w = d q + m */
    QUANT_FILE_Q5_0, /* 32 weights, 22 bytes: f16 d, 4 bytes qh (bit i: weight i's fifth bit), 16 bytes
                        of nibbles; w = d (q - 16) */
    QUANT_FILE_Q5_1, /* 32 weights, 24 bytes: f16 d, f16 m, qh, nibbles; w = d q + m */
    QUANT_FILE_Q4_K, /* 256 weights, 144 bytes: f16 d, f16 dmin, 12 bytes of eight 6-bit scales and
                        mins, 128 bytes of nibbles; w = (d sc) q - (dmin m) a sub-block of 32 */
    QUANT_FILE_Q5_K, /* 256 weights, 176 bytes: as Q4_K with qh[32] (bit s of byte j: weight j of
                        sub-block s's fifth bit) before the nibbles */
    QUANT_FILE_Q6_K, /* 256 weights, 210 bytes: ql[128], qh[64], int8 scales[16] (one a 16 weights), f16
                        d; w = (d scale) (q - 32) */
    QUANT_FILE_COUNT
};

/* A format's block and where its f16 scales lie (the fields whose value must be finite). */
struct quant_file_format {
    const char *name; /* ggml's: "q4_k" */
    int block;        /* weights a block: 32, or QK_K = 256 for the k-quants */
    int bytes;        /* bytes a block */
    int n_scales;     /* f16 fields a block: 1 or 2 */
    struct {
        int off;          /* byte offset in the block */
        const char *name; /* ggml-common.h's field name: "d", "dmin", "m" */
    } scales[2];
};

const struct quant_file_format *quant_file_format(enum quant_file_type t);

/* dst = the n weights (a multiple of the format's block) at src, dequantised. */
void quant_dequantize_file(float *dst, enum quant_file_type t, const void *src, size_t n);

/* The first f16 scale of the n_blocks blocks at src that is NaN or infinite: 0 when none, else -1 with its
 * block index, its field (an index into the format's scales) and its bits. */
int quant_file_check_scales(enum quant_file_type t, const void *src, size_t n_blocks, size_t *block,
                            int *field, uint16_t *bits);

/* Sub-block j's scale and min of a Q4_K (or Q5_K) superblock's packed 12 bytes: j < 4 in the low 6 bits of
 * bytes j and j + 4; j >= 4 in the nibbles of byte j + 4 with their top 2 bits in the top bits of bytes j - 4
 * and j. */
void quant_q4_k_scale_min(const uint8_t scales[12], int j, int *sc, int *m);

#endif
