/* Layer: kernels/ is the bottom of the include graph (it includes nothing from model/, roofline/ or bench/).
 * The compute kernels of one Qwen3 decode step (the sampler has its own header, kernels/sampler.h).
 * Contract: kernels never allocate, print or read files; callers pass every buffer. Each optimized kernel
 * has a plain scalar `_ref` twin that tests compare against. SIMD paths (AVX-512, AVX2+FMA, scalar) are
 * chosen at run time from the CPU's features; kernel_isa_force() pins one for tests and benchmarks.
 * Layouts: matrices row-major [rows][cols] (matvec_panels and gemm also read them as column panels,
 * kernels/col_panels.h); KV cache per layer head-major [n_kv_heads][positions][head_dim].
 */
#ifndef FR_KERNELS_H
#define FR_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/dtype.h"

/* ---- instruction-set dispatch ---- */
enum kernel_isa { KERNEL_ISA_SCALAR, KERNEL_ISA_AVX2, KERNEL_ISA_AVX512, KERNEL_ISA_COUNT };
enum kernel_isa kernel_isa_best(void);     /* best the CPU supports */
enum kernel_isa kernel_isa_active(void);   /* the one in use (best unless forced) */
int kernel_isa_force(enum kernel_isa isa); /* -1 if the CPU lacks it; KERNEL_ISA_COUNT = back to best */
const char *kernel_isa_name(enum kernel_isa isa);
/* Whether the CPU has AVX512_VNNI (the block formats' AVX-512 loops need it; else they take AVX2's) */
bool kernel_has_avx512_vnni(void);
/* "scalar", "avx2" or "avx512" -> *isa; -1 for any other name (or NULL). */
int kernel_isa_parse(const char *name, enum kernel_isa *isa);
/* Environment variable naming the highest ISA the CPU is taken to have (unset: what it reports). */
#define KERNEL_ISA_MAX_ENV "FORGE_ROOFLINE_MAX_ISA"

/* How the kernels prefetch their DRAM streams, chosen from the CPU at first use: KERNEL_PREFETCH_L1, as tuned
 * on Zen 4 (the bf16 matvec prefetches its rows into L1, attention its far blocks 2 blocks ahead), or
 * KERNEL_PREFETCH_L2 on CPUs that stream faster so (AMD family 1Ah, Zen 5: the matvec prefetches rows
 * narrower than 4097 columns into L2 only, attention runs its far prefetch 1 block ahead, where its L1
 * prefetch already reaches, so it issues that one only across the end of a range; see
 * docs/tuning/matvec.md and docs/tuning/attention.md for the figures). kernel_prefetch_force() pins one
 * (KERNEL_PREFETCH_COUNT: back to the CPU's) for tests. */
enum kernel_prefetch { KERNEL_PREFETCH_L1, KERNEL_PREFETCH_L2, KERNEL_PREFETCH_COUNT };
enum kernel_prefetch kernel_prefetch_active(void);
void kernel_prefetch_force(enum kernel_prefetch p);
/* What kernel_prefetch_active() chose and why, for the run's provenance: "the L2 prefetch profile (AMD
 * family 1Ah)". */
const char *kernel_prefetch_describe(void);
/* Whether the profile choice was measured on CPUs of this vendor (AMD or not), CPUID family and model: AMD
 * families 19h (Zen 4) and 1Ah (Zen 5), and Intel's family 6 model 207 (Emerald Rapids: L1 1.3-1.4x L2's
 * matvec GB/s, docs/tuning/matvec.md). Any other CPU runs the L1 profile as a default nobody measured there,
 * and kernel_prefetch_describe says so. */
bool kernel_prefetch_measured_on(bool amd, unsigned family, unsigned model);
/* What the bf16 matvec's loop does beyond the ISA and the profile, to append to kernel_prefetch_describe
 * where the forge matvec runs: on the L2 profile above scalar "; the bf16 matvec reads two rows at a time"
 * (and, with AVX-512 active, that it runs AVX2's loop); "" otherwise. */
const char *kernel_matvec_describe(void);
/* Which loops the Q8_0 / Q4_0 matvec runs on the active ISA (kernels/quant.h): "AVX-512 VNNI (vpdpbusd)",
 * with ", two row groups side by side" on the L2 prefetch profile, "AVX2 (vpmaddubsw)" (also AVX-512 CPUs
 * without VNNI) or "scalar". */
const char *kernel_quant_describe(void);
/* A Q8_0 / Q4_0 matvec (rows x cols, cols whole blocks) on the calling thread alone, whatever team it is
 * in, `passes` times over: x quantised once, then every row through the active ISA's block loop on each
 * pass, as matvec hands each thread its chunk. The format's compute roof (roofline/ceilings.c) times it on
 * L2-resident matrices: the block dot products alone, x's quantisation amortised over the passes as over a
 * large matrix's rows, so no block of a run (its own quantisation in its time) can beat it. */
void matvec_quant_thread(float *y, const void *w, enum fr_dtype t, const float *x, int rows, int cols,
                         long passes);

/* ---- matvec: y[rows] = W[rows][cols] . x[cols], W bf16 or f32, x and y f32, f32 accumulation ---- */
enum matvec_backend { MATVEC_BACKEND_FORGE, MATVEC_BACKEND_OPENBLAS, MATVEC_BACKEND_ONEDNN };
/* "forge", "openblas" or "onednn": the backend's name in messages, report rows and options. */
const char *matvec_backend_name(enum matvec_backend backend);
/* The backend of that name -> *backend; -1 for any other name (or NULL). */
int matvec_backend_parse(const char *name, enum matvec_backend *backend);
/* Splits rows across OpenMP threads: called outside a parallel region (the usual case) it opens its own
 * `omp parallel` team of `threads` threads (the run's thread count: with 1 the call runs on the calling
 * thread, and on AVX-512 takes the solo loop, kernel_ops.h matvec_bf16_solo); called inside an active one,
 * every thread of the team must make the same call (like an orphaned `omp for`) and each computes its share.
 * MATVEC_BACKEND_OPENBLAS runs on OpenBLAS's own threads instead (see kernels/matvec_openblas.c);
 * MATVEC_BACKEND_ONEDNN is oneDNN's matmul with one batch row (kernels/gemm_onednn.h). Returns -1
 * (and sets *why when non-NULL) if the backend cannot run this weight type here (e.g. an OpenBLAS build
 * without cblas_sbgemv). */
int matvec(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
           enum matvec_backend backend, int threads, const char **why);
/* matvec of W stored as column panels of panel_cols columns (kernels/col_panels.h; panel_cols >= cols is
 * matvec itself): the forge backend work-shares each panel's rows in turn, adding every panel after the
 * first to y; OpenBLAS makes one call per panel (beta 1 after the first). panel_cols < 1 is refused. */
int matvec_panels(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
                  int panel_cols, enum matvec_backend backend, int threads, const char **why);
bool matvec_backend_available(enum matvec_backend backend, enum fr_dtype wtype, const char **why);
/* Whether matvec (forge backend, called from one thread outside a parallel region, with more than one
 * OpenMP thread) opens an OpenMP team for this shape: small products run on the calling thread alone. The
 * cost model counts the forks with it. */
bool matvec_opens_team(int rows, int cols);
/* The largest chunk of rows matvec hands a thread at a time (kernels.c); the read ceiling reads in chunks
 * of this size too, so that both pay the same for starting a stream. */
#define MATVEC_CHUNK_MAX_BYTES ((size_t)2 << 20)
/* The smallest, but for a matrix's last rows. */
#define MATVEC_CHUNK_MIN_BYTES ((size_t)128 << 10)
/* How matvec cuts a matrix's rows into the chunks it hands out over a team of `threads`, in whole blocks of
 * MATVEC_ROW_BLOCK rows: each chunk is what is left divided by the team size, within [MATVEC_CHUNK_MIN_BYTES,
 * MATVEC_CHUNK_MAX_BYTES]. Long streams first, and chunks that shrink towards the end, so that threads run
 * out of work at about the same time. The first n_fixed chunks are all of fixed_rows rows; the rest (fewer
 * than threads chunks of the largest size are left after them; teams over 48 are planned as 48) start at
 * tail[i], and tail[n_chunks - n_fixed] == rows. */
#define MATVEC_ROW_BLOCK       16
#define MATVEC_TAIL_CHUNKS_MAX 256
struct matvec_plan {
    int rows, n_chunks, n_fixed, fixed_rows;
    int tail[MATVEC_TAIL_CHUNKS_MAX + 1];
};
void matvec_plan_make(struct matvec_plan *p, int rows, size_t row_bytes, int threads);
/* Chunk c (< p->n_chunks): its first row and number of rows. */
void matvec_plan_chunk(const struct matvec_plan *p, int c, int *first, int *n);
void matvec_ref(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols);
/* matvec_ref of W stored as column panels of panel_cols >= 1 columns (col_panels.h): each weight found by
 * col_panel_index. */
void matvec_ref_panels(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
                       int panel_cols);

/* ---- elementwise and norms (x, y, out f32; norm weights f32, widened at load) ---- */
/* out[i] = x[i] / sqrt(mean(x^2) + eps) * w[i]; out may alias x. */
void rmsnorm(float *out, const float *x, const float *w, int n, float eps);
void rmsnorm_ref(float *out, const float *x, const float *w, int n, float eps);
/* RMSNorm of each of n_heads contiguous vectors of head_dim, in place, sharing w[head_dim]. */
void rmsnorm_heads(float *x, const float *w, int n_heads, int head_dim, float eps);
void rmsnorm_heads_ref(float *x, const float *w, int n_heads, int head_dim, float eps);
/* y[i] += x[i] (the residual add) */
void vec_add(float *y, const float *x, int n);
/* out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)) */
void swiglu(float *out, const float *gate, const float *up, int n);
void swiglu_ref(float *out, const float *gate, const float *up, int n);
/* y[i] = exp(x[i]) with the active ISA's vector exp, the one swiglu and attention use (kernels_simd_body.h,
 * its accuracy stated there); tests bound its error and roofline/ceilings.c times it as the exp ceiling. */
void kernel_vexp(float *y, const float *x, int n);

/* ---- embedding: out[hidden] = f32(table[token][:]), table [rows][hidden] in memory order (quant.h); an
 * element type or Q8_0 / Q4_0 (a K-quant row is quant_k_dequantize_row's, a module above) ---- */
void embed_gather(float *out, const void *table, enum fr_dtype ttype, int rows, int token, int hidden);

/* ---- RoPE, Qwen3/NeoX half rotation: pairs (i, i + head_dim/2), angle pos * theta^(-2i/head_dim) ---- */
/* cos_t, sin_t [head_dim/2] for one position (double-precision angles, stored f32). */
void rope_tables(float *cos_t, float *sin_t, int head_dim, int pos, double theta);
/* Rotates n_heads contiguous vectors of head_dim in place. */
void rope_apply(float *x, const float *cos_t, const float *sin_t, int n_heads, int head_dim);
void rope_apply_ref(float *x, int n_heads, int head_dim, int pos, double theta);

/* ---- KV cache store: dst[n] = convert(src[n]) to the cache type ---- */
void kv_store(void *dst, enum fr_dtype kvtype, const float *src, int n);

/* ---- GQA attention for one new query over n_pos cached positions ----
 * q[n_heads][head_dim]; out[n_heads][head_dim]. K and V head-major, of kvtype: KV head j's rows are n_pos
 * rows of head_dim elements, one after the other, from k_cache + j * head_stride (and v_cache + ...),
 * head_stride >= n_pos * head_dim elements (a cache sized for more positions has gaps between heads).
 * Query head h reads KV head h / (n_heads / n_kv_heads); scores scaled by 1/sqrt(head_dim); softmax in f32
 * with the row max subtracted. scratch needs n_heads * n_pos floats. Splits the work across OpenMP threads
 * (flash-decoding: each KV head's positions in equal pieces, a multiple of the team, or whole heads when the
 * team divides the KV heads but for the last round; handed out dynamically across the heads; a cut head's
 * partial sums merged by whoever finishes its last piece): every cached row is read once per step. Inside a
 * parallel region every thread of the team makes the call; there, positions too few to cut still go out as
 * whole heads once they are more than one block (kernel_ops.h KERNEL_ATT_BLOCK). Outside a region it opens
 * one of at most `threads` threads (the run's). */
void attention(float *out, const float *q, const void *k_cache, const void *v_cache, enum fr_dtype kvtype,
               int n_pos, size_t head_stride, int n_heads, int n_kv_heads, int head_dim, float *scratch,
               int threads);
/* The team barriers (kernel_team_sync) one attention call meets inside a team: 2 where the team shares the
 * heads or their pieces (one before, one after), 1 where the positions are too few and thread 0 runs it
 * while the others wait at the one after. The cost model counts them (0 for no call: n_pos < 1). */
int attention_team_syncs(int n_pos, int n_heads, int n_kv_heads, int head_dim);
/* The same on the calling thread alone, in or out of any team (roofline/core_speed.c times it on one core
 * at a time while the others wait). */
void attention_serial(float *out, const float *q, const void *k_cache, const void *v_cache,
                      enum fr_dtype kvtype, int n_pos, size_t head_stride, int n_heads, int n_kv_heads,
                      int head_dim, float *scratch);
void attention_ref(float *out, const float *q, const void *k_cache, const void *v_cache, enum fr_dtype kvtype,
                   int n_pos, size_t head_stride, int n_heads, int n_kv_heads, int head_dim, float *scratch);

#endif
