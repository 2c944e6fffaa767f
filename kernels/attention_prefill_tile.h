/* Internal to kernels/attention_prefill*.c: the arguments and per-thread scratch of one tile of
 * prefill_attention, and the tile loop of each ISA (attention_prefill_body.h compiled three times). */
#ifndef FR_ATTENTION_PREFILL_TILE_H
#define FR_ATTENTION_PREFILL_TILE_H

#include <stddef.h>

struct prefill_tile_args {
    float *out;
    size_t ldo;
    const float *q;
    size_t ldq;
    const void *k, *v; /* the layer's K and V: KV head j at j * head_stride elements */
    int kv_bf16;
    int p0, n;
    size_t head_stride;
    int group, head_dim;
    float scale;
};

/* One thread's: sized for group * TILE_Q rows at head_dim (prefill_tile_scratch_floats). */
struct prefill_tile_scratch {
    float *qt;         /* [head_dim][rows] the tile's queries, transposed, pre-scaled */
    float *o;          /* [rows][head_dim] unnormalized outputs */
    float *m, *l, *mx; /* [rows] running max and sum; one block's new max */
    float *st;         /* [TILE_K][rows] one block's scores, transposed, then weights */
    float *kf;         /* [TILE_K][head_dim] the block's K, widened */
    float *vf;         /* [TILE_K][head_dim] the block's V, widened */
};

void prefill_attention_tile_scalar(const struct prefill_tile_args *a, struct prefill_tile_scratch *s, int kvh,
                                   int i0, int i1);
void prefill_attention_tile_avx2(const struct prefill_tile_args *a, struct prefill_tile_scratch *s, int kvh,
                                 int i0, int i1);
void prefill_attention_tile_avx512(const struct prefill_tile_args *a, struct prefill_tile_scratch *s, int kvh,
                                   int i0, int i1);

#endif
