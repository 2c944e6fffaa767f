/* The one table of decode-step blocks. Everything keys on enum block_id: the cost model, the
 * microbenchmarks, the decode step's observer, the report rows and the plot points. Adding a block means
 * adding one enum value and one row in blocks.c (a static_assert keeps the two in step). */
#ifndef FR_BLOCKS_H
#define FR_BLOCKS_H

enum block_id {
    BLOCK_EMBED,
    BLOCK_ATTN_NORM,
    BLOCK_QKV_PROJ,
    BLOCK_QK_NORM,
    BLOCK_ROPE,
    BLOCK_KV_APPEND,
    BLOCK_ATTENTION,
    BLOCK_O_PROJ,
    BLOCK_MLP_NORM,
    BLOCK_GATE_UP_PROJ,
    BLOCK_SWIGLU,
    BLOCK_DOWN_PROJ,
    BLOCK_FINAL_NORM,
    BLOCK_LM_HEAD,
    BLOCK_SAMPLER,
    BLOCK_COUNT
};

/* Where a block runs: once per step, or once per layer. */
enum block_scope { BLOCK_SCOPE_STEP, BLOCK_SCOPE_LAYER };

struct block_desc {
    enum block_id id;
    const char *name;       /* report and CSV name, e.g. "qkv_proj" */
    enum block_scope scope; /* calls per step = 1 or n_layers */
    int reads_weights;      /* streams a weight matrix from memory */
    const char *what;       /* one line for --list and report.md */
};

const struct block_desc *block_table(void);               /* BLOCK_COUNT rows, indexed by enum block_id */
const struct block_desc *block_by_name(const char *name); /* NULL when unknown */
const char *block_name(enum block_id id);

#endif
