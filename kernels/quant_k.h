/* Layer: kernels/ (bottom of the include graph).
 * llama.cpp's K-quants Q4_K, Q5_K and Q6_K (ggml-common.h's block_q4_K, block_q5_K, block_q6_K; our own
 * code), 256 weights a superblock, and their matvec against activations quantised to Q8_K, as llama.cpp's
 * CPU backend does: a superblock's product is exact integer sums times its scales, and Q8_K's per-16 sums
 * (bsums) carry Q4_K's and Q5_K's mins and Q6_K's -32 out of the integer products. Layouts:
 * kernels/quant_k_blocks.h and kernels/quant_dequant.c. Rows are whole superblocks (cols a multiple of 256);
 * a matrix in memory has its rows in groups of 8 (quant_k_matrix_pack) and its readers go through
 * quant_k_matrix_row. Checked in tests/test_quant_k.c against the exact reference and the dequantised
 * values' product on every ISA. */
#ifndef FR_QUANT_K_H
#define FR_QUANT_K_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/quant_k_blocks.h"
#include "kernels/quant_k_layout.h"

/* Bytes of a row of n weights (n a multiple of 256). */
size_t quant_k_row_bytes(enum quant_k_type t, size_t n);
const char *quant_k_name(enum quant_k_type t); /* "q4_k", "q6_k", "q5_k" */

/* dst = the n (a multiple of 256) values of src in format t, our own quantiser (not llama.cpp's search:
 * the same layout, other codes): each sub-block's range over 15 (Q4_K) or 31 (Q5_K), or each group's
 * largest magnitude over 32 (Q6_K), the scales quantised to the superblock's, then the codes against the
 * quantised scales. And back (Q5_K's and the others' dequantisers are kernels/quant_dequant.c's). */
void quant_k_quantize_row(void *dst, enum quant_k_type t, const float *src, size_t n);
void quant_k_dequantize_row(float *dst, enum quant_k_type t, const void *src, size_t n);

/* x[n] (n a multiple of 256) as Q8_K: d = max|x| / 127, codes round(x / d) (nearest even), bsums. */
void quant_k_quantize_act(struct quant_block_q8_k *dst, const float *x, size_t n);

/* Row . x over nb superblocks: the exact integer sums of each sub-block, combined with the scales in
 * double. The reference of every ISA's loop. */
double quant_k_dot_ref(enum quant_k_type t, const void *row, const struct quant_block_q8_k *x, int nb);

/* Row r of a matrix in memory order, dequantised (cols values). */
void quant_k_matrix_dequantize_row(float *dst, enum quant_k_type t, const void *m, int rows, int cols, int r);

/* y[r] = row r . x for r in [r0, r1) of a [rows][nb superblocks] matrix w in memory order, on the calling
 * thread, with the active ISA's dot product (scalar, AVX2 maddubs, AVX-512 VNNI dpbusd). r0 and r1 lie on
 * group bounds (multiples of QUANT_K_GROUP_ROWS, or past quant_k_grouped_rows, or rows). */
void quant_k_matvec_rows(float *y, const void *w, enum quant_k_type t, const struct quant_block_q8_k *x,
                         int nb, int rows, int r0, int r1);
/* The whole matvec over w in memory order: x (cols floats, a multiple of 256) quantised once, rows split
 * over `threads` OpenMP threads (1: the calling thread) on group bounds. Returns -1 when cols is not a
 * multiple of 256 or the buffer for x's quantised copy cannot be had. */
int quant_k_matvec(float *y, const void *w, enum quant_k_type t, const float *x, int rows, int cols,
                   int threads);
/* The loop the active ISA runs, e.g. "avx512 vnni dpbusd", for the reports */
const char *quant_k_describe(void);

#endif
