/* The tensors a Qwen3 config calls for, as every checkpoint format names them, and where each lands in
 * struct qwen3_weights. Both file loaders (model/safetensors.c, model/gguf_qwen3.c) fill one table from
 * their file's index, check it complete and free of overlaps, then copy every tensor once, converting. */
#ifndef FR_WEIGHT_SLOTS_H
#define FR_WEIGHT_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/fr_err.h"
#include "kernels/quant_dequant.h"
#include "model/weights.h"

enum wslot_part {
    WSLOT_Q,
    WSLOT_K,
    WSLOT_V,
    WSLOT_O,
    WSLOT_Q_NORM,
    WSLOT_K_NORM,
    WSLOT_GATE,
    WSLOT_UP,
    WSLOT_DOWN,
    WSLOT_ATTN_NORM,
    WSLOT_MLP_NORM,
    WSLOT_LAYER_COUNT,
    /* the per-model tensors, after the per-layer ones */
    WSLOT_EMBED = WSLOT_LAYER_COUNT,
    WSLOT_FINAL_NORM,
    WSLOT_LM_HEAD,
};

/* Tensor naming: Hugging Face's (model.layers.N.self_attn.q_proj.weight) or llama.cpp's GGUF names
 * (blk.N.attn_q.weight), which its converter writes for Qwen3 without permuting any rows. */
enum wslot_names { WSLOT_NAMES_HF, WSLOT_NAMES_GGUF };

/* Types a file may store a tensor in: three element types, llama.cpp's blocks Q8_0 and Q4_0 (GGUF only; the
 * in-memory blocks of kernels/quant.h, byte for byte), and the block formats no kernel runs
 * (kernels/quant_dequant.h, in its order from WSLOT_Q4_1 on), which the copy converts to the weights' type.
 */
enum wslot_dtype {
    WSLOT_BF16,
    WSLOT_F16,
    WSLOT_F32,
    WSLOT_Q8_0,
    WSLOT_Q4_0,
    WSLOT_Q4_1,
    WSLOT_Q5_0,
    WSLOT_Q5_1,
    WSLOT_Q4_K,
    WSLOT_Q5_K,
    WSLOT_Q6_K,
    WSLOT_DTYPE_COUNT
};

/* One tensor the config calls for, and what the file's index said about it. */
struct wslot {
    enum wslot_part part;
    int layer;        /* -1 for per-model tensors */
    int ndim;         /* 1 or 2 */
    uint64_t dims[2]; /* [rows, cols] as PyTorch lists them (row-major); cols 0 when ndim is 1 */
    int seen;         /* the file has it */
    enum wslot_dtype dtype;
    uint64_t begin, end; /* its bytes, relative to the start of the file's data */
};

struct wslot_table {
    const struct qwen3_config *cfg;
    enum wslot_names names;
    struct wslot *slots; /* 3 per-model slots, then WSLOT_LAYER_COUNT per layer */
    int n_slots;
};

int wslot_table_init(struct wslot_table *t, const struct qwen3_config *cfg, enum wslot_names names,
                     const char *file, struct fr_err *err);
void wslot_table_free(struct wslot_table *t);

/* The slot a tensor name maps to, or NULL for a name the config does not call for. Layer numbers must be
 * canonical decimal ("07" is not layer 7) so two names can never reach the same slot. */
struct wslot *wslot_find(struct wslot_table *t, const char *name);

/* The slot's tensor name in the table's naming. */
void wslot_name(const struct wslot_table *t, const struct wslot *s, char *buf, size_t len);

/* Bytes of n elements (n a multiple of the type's block). */
size_t wslot_dtype_bytes(enum wslot_dtype d, size_t n);
/* Whether d is a format no kernel runs (converted at load); *t (when non-NULL) its kernels/quant_dequant.h
 * format. */
bool wslot_dtype_file_only(enum wslot_dtype d, enum quant_file_type *t);
/* The type's ggml name: "bf16", "q8_0", "q4_k". */
const char *wslot_dtype_name(enum wslot_dtype d);
/* The weight type a file type is read as when nothing converts it (f16: f32; a format no kernel runs:
 * q8_0). */
enum fr_dtype wslot_dtype_wtype(enum wslot_dtype d);
/* Whether a kernel runs d as the file holds it (bf16, f32, q8_0, q4_0, q4_k, q5_k, q6_k; f16 read as
 * f32). */
bool wslot_dtype_runs(enum wslot_dtype d);
/* Whether a layer's slot of this part is one of its projection matrices (not a norm). */
bool wslot_part_is_layer_matrix(enum wslot_part p);

/* "[r, c]" or "[n]" into buf. */
void wslot_format_shape(char *buf, size_t len, const uint64_t *dims, int ndim);

/* Every required tensor present (a tied config's LM head is optional), and no two byte ranges sharing a
 * byte. */
int wslot_check_complete(const struct wslot_table *t, const char *file, struct fr_err *err);

/* Copies every seen slot from data (the start of the file's data) into w, converting to w's dtypes
 * (norms f32, rounded to bf16 values when w is bf16). A block tensor of w's block type is copied as it is;
 * a Q8_0/Q4_0 one of another type is dequantised and, for a block w, requantised from its values rounded to
 * bf16, as an element tensor is; one in a file-only format is requantised from its exact values. A tied
 * config's LM head is checked, never copied. */
void wslot_copy_all(const struct wslot_table *t, const unsigned char *data, struct qwen3_weights *w);

/* The layer matrix part a slot is (WPART_Q for anything else). */
enum wpart wslot_wpart(enum wslot_part p);
/* The type wslot_export writes slot s's tensor in: a matrix in its own format in w, a norm in f32. */
enum fr_dtype wslot_export_type(const struct wslot *s, const struct qwen3_weights *w);
/* Bytes of slot s's tensor as wslot_export writes it. */
size_t wslot_export_bytes(const struct wslot *s, const struct qwen3_weights *w);
/* Writes slot s's tensor from w into out (wslot_export_bytes bytes) in a file's layout: rows row-major,
 * column panels undone; the inverse of wslot_copy_all for a file of w's types. Returns 0, or -1 for a tied
 * model's LM head, which w does not hold apart from the embedding. */
int wslot_export(const struct wslot *s, const struct qwen3_weights *w, unsigned char *out);

#endif
