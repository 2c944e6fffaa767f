/* Tiled causal attention for prompt processing (kernels/attention_prefill.h): the work split and the ISA
 * dispatch; the tile loop is kernels/attention_prefill_body.h, built once per ISA. */
#include "kernels/attention_prefill.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "kernels/attention_prefill_tile.h"
#include "kernels/kernels.h"

double prefill_attention_kv_positions(long p0, long n) {
    double positions = 0;
    for (long i0 = 0; i0 < n; i0 += PREFILL_ATT_TILE_Q) {
        long last =
            i0 + PREFILL_ATT_TILE_Q < n ? i0 + PREFILL_ATT_TILE_Q : n; /* one past the tile's last row */
        positions += (double)(p0 + last);
    }
    return positions;
}

typedef void (*tile_fn)(const struct prefill_tile_args *, struct prefill_tile_scratch *, int, int, int);

static tile_fn tile_for_isa(void) {
    switch (kernel_isa_active()) {
    case KERNEL_ISA_AVX512:
        return prefill_attention_tile_avx512;
    case KERNEL_ISA_AVX2:
        return prefill_attention_tile_avx2;
    default:
        return prefill_attention_tile_scalar;
    }
}

static size_t scratch_floats(int group, int hd) {
    const size_t rows = (size_t)group * PREFILL_ATT_TILE_Q, tk = PREFILL_ATT_TILE_K;
    const size_t n = 2 * rows * (size_t)hd + 3 * rows + rows * tk + 2 * tk * (size_t)hd;
    return (n + 15) & ~(size_t)15; /* each thread's part starts on a cache line */
}

static void scratch_carve(struct prefill_tile_scratch *s, float *p, int group, int hd) {
    const size_t rows = (size_t)group * PREFILL_ATT_TILE_Q, tk = PREFILL_ATT_TILE_K;
    s->qt = p;
    s->o = s->qt + rows * (size_t)hd;
    s->m = s->o + rows * (size_t)hd;
    s->l = s->m + rows;
    s->mx = s->l + rows;
    s->st = s->mx + rows;
    s->kf = s->st + rows * tk;
    s->vf = s->kf + tk * (size_t)hd;
}

/* Tiles go out longest first (the last query tiles read the most positions) from a shared counter, so the
 * causal triangle's uneven tiles spread evenly over the threads. */
static void run_tiles(const struct prefill_tile_args *a, tile_fn tile, int n_kv_heads, int n_tiles,
                      struct prefill_tile_scratch *s) {
#pragma omp for schedule(dynamic, 1) nowait
    for (int w = 0; w < n_tiles * n_kv_heads; w++) {
        const int t = n_tiles - 1 - w / n_kv_heads, kvh = w % n_kv_heads;
        const int i0 = t * PREFILL_ATT_TILE_Q,
                  i1 = i0 + PREFILL_ATT_TILE_Q < a->n ? i0 + PREFILL_ATT_TILE_Q : a->n;
        tile(a, s, kvh, i0, i1);
    }
}

int prefill_attention(float *out, size_t ldo, const float *q, size_t ldq, const void *k_cache,
                      const void *v_cache, enum fr_dtype kvtype, int p0, int n, size_t head_stride,
                      int n_heads, int n_kv_heads, int head_dim, int threads) {
    if (n < 1) return 0;
    const struct prefill_tile_args a = {out,
                                        ldo,
                                        q,
                                        ldq,
                                        k_cache,
                                        v_cache,
                                        kvtype == FR_DTYPE_BF16,
                                        p0,
                                        n,
                                        head_stride,
                                        n_heads / n_kv_heads,
                                        head_dim,
                                        1.0f / sqrtf((float)head_dim)};
    const tile_fn tile = tile_for_isa();
    const int n_tiles = (n + PREFILL_ATT_TILE_Q - 1) / PREFILL_ATT_TILE_Q;
    const int team = omp_in_parallel() ? 1 : threads < 1 ? 1 : threads;
    /* every thread's scratch up front: a thread that found none could not leave the work-share alone */
    const size_t per = scratch_floats(a.group, head_dim);
    float *buf = aligned_alloc(64, per * (size_t)team * sizeof(float));
    if (!buf) return -1;
#pragma omp parallel num_threads(team) if (team > 1)
    {
        struct prefill_tile_scratch s;
        scratch_carve(&s, buf + per * (size_t)omp_get_thread_num(), a.group, head_dim);
        run_tiles(&a, tile, n_kv_heads, n_tiles, &s);
    }
    free(buf);
    return 0;
}
