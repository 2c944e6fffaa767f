/* qwen3_weights: every tensor of a Qwen3 model in one allocation, carved by a sizes table.
 * Matrices are [rows][cols] in the weight dtype (bf16, f32, Q8_0 or Q4_0): the layers' projection matrices
 * (qkv, o, gate_up, down) stored as column panels of col_panel_width(dtype, cols) columns
 * (kernels/col_panels.h: row-major up to 2048 columns, 6553 in a block format), the embedding and an untied
 * LM head row-major. Norms are stored as f32, holding bf16 values in a bf16 model (a bf16 model is the
 * checkpoint rounded to bf16, norms included). q, k, v are fused into one [q_dim + 2 * kv_dim][hidden] matrix
 * and gate, up into one [2 * intermediate][hidden] matrix, so each projection of the decode step is a single
 * matvec. */
#ifndef FR_WEIGHTS_H
#define FR_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/dtype.h"
#include "kernels/fr_err.h"
#include "model/config.h"
#include "model/weight_formats.h"

struct qwen3_layer_weights {
    float *attn_norm; /* [hidden] input_layernorm */
    void *qkv;        /* [q_dim + 2 * kv_dim][hidden]: q_proj rows, then k_proj, then v_proj */
    float *q_norm;    /* [head_dim] shared by every query head */
    float *k_norm;    /* [head_dim] shared by every KV head */
    void *o;          /* [hidden][q_dim] o_proj */
    float *mlp_norm;  /* [hidden] post_attention_layernorm */
    void *gate_up;    /* [2 * intermediate][hidden]: gate_proj rows, then up_proj rows */
    void *down;       /* [hidden][intermediate] down_proj */
};

struct qwen3_weights {
    struct qwen3_config cfg;            /* the shape these tensors were carved for */
    enum fr_dtype wtype;                /* every matrix's type; in a mixed model the layers' commonest */
    struct weight_formats formats;      /* each matrix's own type */
    void *embed;                        /* [vocab][hidden] model.embed_tokens */
    const void *lm_head;                /* [vocab][hidden]: aliases embed when tied, else lm_head_own */
    void *lm_head_own;                  /* [vocab][hidden] lm_head.weight when untied; NULL when tied */
    float *final_norm;                  /* [hidden] model.norm */
    struct qwen3_layer_weights *layers; /* [n_layers] */
    void *base;                         /* the one allocation every pointer above points into */
    size_t total_bytes;                 /* its size */
};

/* Bytes per tensor group, for one layer where marked (layer 0's in a model whose layers differ in their
 * formats; qwen3_matrix_runs gives each layer's), so the cost model can be cross-checked. */
struct qwen3_weight_sizes {
    size_t embed_bytes;       /* [vocab][hidden] in the weight dtype */
    size_t lm_head_bytes;     /* bytes the LM head reads per step (= embed_bytes when tied) */
    size_t lm_head_own_bytes; /* bytes allocated for an untied LM head; 0 when tied */
    size_t final_norm_bytes;  /* [hidden] f32 */
    size_t attn_norm_bytes;   /* per layer, [hidden] f32 */
    size_t qkv_bytes;         /* per layer */
    size_t qk_norm_bytes;     /* per layer, q_norm + k_norm, 2 * [head_dim] f32 */
    size_t o_bytes;           /* per layer */
    size_t mlp_norm_bytes;    /* per layer, [hidden] f32 */
    size_t gate_up_bytes;     /* per layer */
    size_t down_bytes;        /* per layer */
    size_t layer_bytes;       /* per layer, sum of the above (without alignment padding) */
    size_t total_bytes;       /* the whole allocation, including 64-byte alignment padding */
};

/* Fills the sizes table for a config; fails on shapes whose sizes overflow. */
int qwen3_weights_sizes(const struct qwen3_config *cfg, enum fr_dtype wtype, struct qwen3_weight_sizes *sz,
                        struct fr_err *err);

/* The same for a model whose matrices each have their own format. */
int qwen3_weights_sizes_formats(const struct qwen3_config *cfg, const struct weight_formats *f,
                                struct qwen3_weight_sizes *sz, struct fr_err *err);

/* Allocates (uninitialized) weights for cfg. Refuses up front, naming the bytes it would need, when they
 * exceed MemAvailable. On failure *w is left empty (safe to free). */
int qwen3_weights_alloc(struct qwen3_weights *w, const struct qwen3_config *cfg, enum fr_dtype wtype,
                        struct fr_err *err);

/* The same with a format per matrix (model/weight_formats.h). */
int qwen3_weights_alloc_formats(struct qwen3_weights *w, const struct qwen3_config *cfg,
                                const struct weight_formats *f, struct fr_err *err);

/* A layer's four projections, q, k, v fused into one and gate, up into another. */
enum qwen3_matrix { QWEN3_MAT_QKV, QWEN3_MAT_O, QWEN3_MAT_GATE_UP, QWEN3_MAT_DOWN, QWEN3_MAT_COUNT };

/* Rows [row0, row0 + rows) of a projection, stored in one type as a [rows][cols] matrix of their own in
 * that type's column panels of pw columns. A projection whose parts (q, k, v; gate, up) share a type is one
 * run, the fused matrix; one whose parts differ is a run for each stretch of parts of one type, one after
 * another from the layer's pointer, each 64-byte aligned. */
struct qwen3_run {
    void *w;
    enum fr_dtype type;
    int row0, rows, cols, pw;
};
#define QWEN3_MAX_RUNS 3
/* The runs of layer `layer`'s projection m; returns their number. */
int qwen3_matrix_runs(const struct qwen3_weights *w, int layer, enum qwen3_matrix m,
                      struct qwen3_run runs[QWEN3_MAX_RUNS]);
/* The projection and its rows that part p of a layer is, and the run holding its first row. */
enum qwen3_matrix qwen3_part_matrix(enum wpart p);
int qwen3_part_row0(const struct qwen3_config *cfg, enum wpart p);
void qwen3_part_run(const struct qwen3_weights *w, int layer, enum wpart p, struct qwen3_run *run);
/* The weights' formats in words: "bf16", or "q4_k 168, q6_k 29" for a mixed model. */
void qwen3_weights_formats_name(const struct qwen3_weights *w, char *buf, size_t len);

/* Where a matrix's values come from, by their place in the bf16 model's layout (a layer matrix in bf16's
 * column panels of pw columns, an embedding row-major, pw its columns): a bf16 matrix, or (bf16 NULL) the
 * synthetic stream `key` scaled by `scale`. */
struct qwen3_values {
    const uint16_t *bf16;
    uint64_t key;
    float scale;
    int rows, pw;
};
/* Stores run's rows from v, rounded to bf16 values first unless the run is f32 and v synthetic (an f32
 * model's values are not rounded), then quantised into the run's type where it is one. */
void qwen3_run_store(const struct qwen3_run *run, const struct qwen3_values *v);

/* Deterministic synthetic weights from a seed: matrices uniform in +-1/sqrt(cols), norms uniform in
 * [0.9, 1.1] (rounded to bf16 values in a bf16 model). Same seed, config and dtype give bit-identical
 * weights for any thread count. */
void qwen3_weights_init_synthetic(struct qwen3_weights *w, uint64_t seed);

/* Every matrix from the file's row order to the kernels' memory order (kernels/quant.h: Q4_0's row groups,
 * each column panel on its own; nothing to do for other types). The loaders and the synthetic init call it
 * once every tensor is in place. */
void qwen3_weights_pack(struct qwen3_weights *w);

void qwen3_weights_free(struct qwen3_weights *w);

/* Fails with a message naming `what` and both byte counts when need_bytes exceeds MemAvailable (read from
 * /proc/meminfo; when that file cannot be read the check passes and the allocation itself decides). */
int qwen3_mem_check(size_t need_bytes, const char *what, struct fr_err *err);

/* The blocks of QUANT_BLOCK columns of a [rows][cols] matrix (cols a multiple of QUANT_BLOCK), counted row
 * by row, between two column-panel layouts (kernels/col_panels.h): bf16's and a block format's differ
 * (2048 columns against up to 6553), so moving a matrix from one to the other, or filling the block format
 * with bf16's values, places each block by its row and column in both. No block straddles a panel of
 * either: every panel width is whole blocks. */
struct qwen3_block_map {
    int rows, cols, pw_from, pw_to;
};
/* A layer matrix from bf16's panels into block type t's (the layout at the head of this file). */
struct qwen3_block_map qwen3_layer_block_map(enum fr_dtype t, int rows, int cols);
/* The number of blocks, and the element offsets where block i starts in the two layouts. */
long qwen3_block_count(const struct qwen3_block_map *m);
void qwen3_block_at(const struct qwen3_block_map *m, long i, size_t *from, size_t *to);

/* The counter-based fill behind the synthetic data: dst[i] = scale * u(seed, stream, i) in dtype t, u uniform
 * in [-1, 1) with 24 random bits, element by element independent of the thread count (OpenMP). Shared
 * with the KV cache's random fill. */
void qwen3_fill_uniform(void *dst, enum fr_dtype t, size_t n, float scale, uint64_t seed, uint64_t stream);

#endif
