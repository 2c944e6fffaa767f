/* The AVX-512 VNNI K-quant dot products (kernels/quant_k_simd_body.h): vpmaddubsw's pairs, then vpdpwssd
 * multiplies them by the scales and adds into the int32 lanes in one instruction (AVX2 needs vpmaddwd and
 * an add). Chosen only where the CPU has AVX512_VNNI (quant_k.c). */
#include <immintrin.h>

static inline __m256i qk_scaled_dot(__m256i acc, __m256i u, __m256i s, __m256i sc);

#include "kernels/quant_k_group_body.h"
#include "kernels/quant_k_simd_body.h"

static inline __m256i qk_scaled_dot(__m256i acc, __m256i u, __m256i s, __m256i sc) {
    return _mm256_dpwssd_epi32(acc, _mm256_maddubs_epi16(u, s), sc);
}

const struct quant_k_ops quant_k_ops_avx512 = {qk_dot_q4_k,
                                               qk_dot_q6_k,
                                               qk_dot_q5_k,
                                               qkg_q4_k,
                                               qkg_q6_k,
                                               qk_quantize_act,
                                               "avx512 vnni vpmaddubsw+vpdpwssd"};
