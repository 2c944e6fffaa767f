/* Layer: kernels/ (bottom of the include graph).
 * The block formats Q8_0 and Q4_0 of matrix weights, with llama.cpp's block layout (ggml-common.h's
 * block_q8_0 and block_q4_0; our own code): 32 weights a block, one f16 scale d first. Q8_0: w = d * q, q
 * int8 in [-127, 127], d = max|w| / 127 (34 bytes a block). Q4_0: w = d * (q - 8), q a 4-bit code in
 * [0, 15], the low nibbles of the 16 bytes elements 0-15 and the high nibbles 16-31, d = m / -8 where m is
 * the block's value of largest magnitude (18 bytes a block). Rows are whole blocks: a matrix's columns (and
 * a column panel's) must be a multiple of 32.
 * The matvec of a block matrix quantises x first, per 32-block, to int8 with an f32 scale (llama.cpp's Q8_0
 * activations, whose scale is f16): a block's product is then an integer dot product times two scales.
 * Checked in tests/test_quant.c: round trips within the formats' bounds, every ISA's matvec against
 * quant_matvec_ref and against the dequantised weights' f32 product. */
#ifndef FR_QUANT_H
#define FR_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/dtype.h"

#define QUANT_BLOCK 32

struct quant_block_q8_0 {
    uint16_t d; /* f16 scale */
    int8_t qs[QUANT_BLOCK];
};
struct quant_block_q4_0 {
    uint16_t d;                  /* f16 scale */
    uint8_t qs[QUANT_BLOCK / 2]; /* element i in the low nibble of qs[i], element 16 + i in the high one */
};
_Static_assert(sizeof(struct quant_block_q8_0) == 34, "Q8_0 block is 34 bytes");
_Static_assert(sizeof(struct quant_block_q4_0) == 18, "Q4_0 block is 18 bytes");

/* How a block matrix [rows][cols] lies in memory: rows in groups of QUANT_GROUP_ROWS, so that one vector of
 * the matvec holds a group's sums (one scale load and conversion serves every row of it, and no block's sum
 * is reduced across lanes; measured in docs/tuning/quant-matvec.md). A group takes the bytes its rows take
 * in the file, where they would start; within it, for each block column k, QUANT_Q4_0_GROUP_BYTES or
 * QUANT_Q8_0_GROUP_BYTES: the group's f16 scales, then the code bytes in quads of 4 * QUANT_GROUP_ROWS
 * bytes (four for Q4_0's 16 code bytes a block, eight for Q8_0's 32), quad q holding bytes 4q..4q+3 of each
 * row's qs in turn (row j at 4j). The last rows % QUANT_GROUP_ROWS rows stay in file order. Loaders and
 * quantisers pack a matrix once it is whole (quant_matrix_pack); writers unpack or read blocks through
 * quant_matrix_block. */
#define QUANT_GROUP_ROWS       16
#define QUANT_Q4_0_GROUP_BYTES (QUANT_GROUP_ROWS * 18)
#define QUANT_Q8_0_GROUP_BYTES (QUANT_GROUP_ROWS * 34)

/* The widest x the matvec quantises (its per-thread buffer), in columns. */
#define QUANT_ACT_MAX_COLS 32768

/* IEEE binary16 <-> f32, round to nearest even (the scales). */
float quant_f16_to_f32(uint16_t h);
uint16_t quant_f16_from_f32(float f);

/* 0 when a matrix of block type t can have `cols` columns (a multiple of 32, at most QUANT_ACT_MAX_COLS);
 * else -1 and *why (when non-NULL) says why. Any cols for an element type. */
int quant_check_cols(enum fr_dtype t, int cols, const char **why);

/* dst = the n (a multiple of 32) values of src in block type t; and back. */
void quant_quantize_row(void *dst, enum fr_dtype t, const float *src, size_t n);
void quant_dequantize_row(float *dst, enum fr_dtype t, const void *src, size_t n);

/* Rows of a [rows][...] matrix of type t that lie in groups (the first ones; 0 but for Q4_0). */
int quant_grouped_rows(enum fr_dtype t, int rows);
/* A whole [rows][cols] matrix of type t from file order to memory order, in place; and back (no-ops but for
 * Q4_0). Not for matrices being read by another thread meanwhile. */
void quant_matrix_pack(void *m, enum fr_dtype t, int rows, int cols);
void quant_matrix_unpack(void *m, enum fr_dtype t, int rows, int cols);
/* The same for a [rows][cols] matrix stored as column panels of pw columns (kernels/col_panels.h), each
 * panel packed as a matrix of its own. */
void quant_panels_pack(void *m, enum fr_dtype t, int rows, int cols, int pw);
/* Block k of row r of a [rows][cols] matrix m in memory order (a block type), into blk in file order. */
void quant_matrix_block(void *blk, enum fr_dtype t, const void *m, int rows, int cols, int r, int k);
/* dst = columns [c0, c0 + n) of row r of m (c0 and n multiples of 32), dequantised. */
void quant_matrix_dequantize(float *dst, enum fr_dtype t, const void *m, int rows, int cols, int r, int c0,
                             int n);

/* x quantised for a block matvec: per 32-block int8 codes qs, scale d (x ~ d * qs) and the integer
 * offset the SIMD Q4_0 dot products start from: c4 = -8 * sum(qs) (Q4_0's codes carry +8). */
struct quant_act {
    const int8_t *qs;
    const float *d;
    const int32_t *c4;
    int n;
};
/* x[n] (n a multiple of 32, at most QUANT_ACT_MAX_COLS) quantised into the calling thread's buffer; valid
 * until the thread's next call. quant_act_quantize runs the plain loop; the matvec runs the active ISA's
 * (kernels/quant_ops.h), which gives the same codes, scales and sums bit for bit (max and IEEE multiply,
 * round to nearest even: no step depends on the order), so every path multiplies the same codes. */
typedef void quant_act_blocks_fn(int8_t *qs, float *d, int32_t *c4, const float *x, int nb);
void quant_act_blocks_scalar(int8_t *qs, float *d, int32_t *c4, const float *x, int nb);
const struct quant_act *quant_act_quantize_by(const float *x, int n, quant_act_blocks_fn *blocks);
const struct quant_act *quant_act_quantize(const float *x, int n);

/* The reference: x quantised as above, each block's integer dot product exact, summed in double; with
 * `add` the row's sum is added to y. */
void quant_matvec_ref(float *y, const void *w, enum fr_dtype t, const float *x, int rows, int cols, int add);

#endif
