/* The public kernels of kernels.h: run-time ISA dispatch, argument shapes and OpenMP work splitting around
 * the per-ISA inner loops of kernel_ops.h. Every kernel here is checked against its _ref twin
 * (kernels_ref.c) for every ISA the CPU supports in tests/test_kernels_*.c.
 *
 * Threading: matvec and attention split their work over a team. Called by every thread of a kernel team
 * (kernels/team.h: the decode step's) they share it through the team's tickets and meet at its spin barrier;
 * inside another active OpenMP region they behave like an orphaned `omp for` (every thread of the team makes
 * the same call, each takes its share and all meet at a barrier before returning); called from one thread
 * outside any region they open their own `omp parallel` region. */
#include <cpuid.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel_ops.h"
#include "kernels/kernels.h"
#include "kernels/col_panels.h"
#include "kernels/gemm_onednn.h"
#include "kernels/quant.h"
#include "kernels/quant_ops.h"
#include "kernels/team.h"

/* ---- instruction-set dispatch ---- */

static const struct kernel_ops *const kernel_ops_by_isa[KERNEL_ISA_COUNT] = {
    [KERNEL_ISA_SCALAR] = &kernel_ops_scalar,
    [KERNEL_ISA_AVX2] = &kernel_ops_avx2,
    [KERNEL_ISA_AVX512] = &kernel_ops_avx512,
};

static const char *const kernel_isa_names[KERNEL_ISA_COUNT] = {
    [KERNEL_ISA_SCALAR] = "scalar",
    [KERNEL_ISA_AVX2] = "avx2",
    [KERNEL_ISA_AVX512] = "avx512",
};

/* -1 until first use; then an enum kernel_isa. Relaxed atomics: every thread computes the same value. */
static int kernel_isa_best_cached = -1;
static int kernel_isa_forced = -1;

static enum kernel_isa kernel_isa_detect(void) {
    __builtin_cpu_init();
    /* The AVX2 file is built with -mavx2 -mfma (and -mf16c, whose instructions nothing here uses: every AVX2
     * CPU has it, and clang's __builtin_cpu_supports does not know its name); the AVX-512 file also with
     * F/BW/VL/DQ (and BF16, likewise unused, so CPUs without AVX512_BF16 run it too). The compiler's
     * checks include the OS's XSAVE state (XCR0): a kernel that does not save zmm registers gets AVX2. */
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    enum kernel_isa best = avx512 ? KERNEL_ISA_AVX512 : avx2 ? KERNEL_ISA_AVX2 : KERNEL_ISA_SCALAR;
    /* KERNEL_ISA_MAX_ENV caps what the CPU is taken to have, as oneDNN's ONEDNN_MAX_CPU_ISA does: a machine
     * then behaves as one without the higher sets (the tests use it to see --isa refused). */
    enum kernel_isa cap;
    if (kernel_isa_parse(getenv(KERNEL_ISA_MAX_ENV), &cap) == 0 && cap < best) best = cap;
    return best;
}

int kernel_isa_parse(const char *name, enum kernel_isa *isa) {
    for (int k = 0; name && k < KERNEL_ISA_COUNT; k++)
        if (strcmp(name, kernel_isa_names[k]) == 0) {
            *isa = (enum kernel_isa)k;
            return 0;
        }
    return -1;
}

enum kernel_isa kernel_isa_best(void) {
    int best = __atomic_load_n(&kernel_isa_best_cached, __ATOMIC_RELAXED);
    if (best < 0) {
        best = (int)kernel_isa_detect();
        __atomic_store_n(&kernel_isa_best_cached, best, __ATOMIC_RELAXED);
    }
    return (enum kernel_isa)best;
}

enum kernel_isa kernel_isa_active(void) {
    int forced = __atomic_load_n(&kernel_isa_forced, __ATOMIC_RELAXED);
    return forced >= 0 ? (enum kernel_isa)forced : kernel_isa_best();
}

int kernel_isa_force(enum kernel_isa isa) {
    if (isa == KERNEL_ISA_COUNT) {
        __atomic_store_n(&kernel_isa_forced, -1, __ATOMIC_RELAXED);
        return 0;
    }
    if ((int)isa < 0 || isa > kernel_isa_best()) return -1; /* each ISA level implies the ones below */
    __atomic_store_n(&kernel_isa_forced, (int)isa, __ATOMIC_RELAXED);
    return 0;
}

const char *kernel_isa_name(enum kernel_isa isa) {
    return (int)isa >= 0 && isa < KERNEL_ISA_COUNT ? kernel_isa_names[isa] : "unknown";
}

const struct kernel_ops *kernel_ops_active(void) {
    return kernel_ops_by_isa[kernel_isa_active()];
}

void kernel_vexp(float *y, const float *x, int n) {
    if (n > 0) kernel_ops_active()->vexp(y, x, n);
}

/* ---- matvec ---- */

/* Rows are handed out in chunks (matvec_plan_make: whole blocks of MATVEC_ROW_BLOCK rows, so every chunk
 * starts on a whole block of the SIMD loops and on a 64-byte line of y), dynamically: a thread that loses its
 * core for a while (a shared or noisy machine) does not hold the others up at the barrier with a fixed share
 * of the matrix, and each chunk is still one long contiguous stream. Every chunk starts a new stream, and
 * that costs: the chunks are as long as MATVEC_CHUNK_MAX_BYTES while much is left, then shrink to what is
 * left divided by the team size, so that the threads finish together. Neither the split nor the barriers are
 * where the matvec loses to the read (docs/tuning/matvec.md, "Chunk plan"). */
#define MATVEC_PLAN_TEAM_MAX 48
_Static_assert(MATVEC_ROW_BLOCK % QUANT_GROUP_ROWS == 0, "a chunk starts on a block row group");
void matvec_plan_make(struct matvec_plan *p, int rows, size_t row_bytes, int threads) {
    size_t block_bytes = row_bytes * MATVEC_ROW_BLOCK > 0 ? row_bytes * MATVEC_ROW_BLOCK : 1;
    int t = threads < 1 ? 1 : threads > MATVEC_PLAN_TEAM_MAX ? MATVEC_PLAN_TEAM_MAX : threads;
    int blocks = (rows + MATVEC_ROW_BLOCK - 1) / MATVEC_ROW_BLOCK;
    size_t most = MATVEC_CHUNK_MAX_BYTES / block_bytes, least = MATVEC_CHUNK_MIN_BYTES / block_bytes;
    most = most < 1 ? 1 : most > (size_t)blocks ? (size_t)(blocks > 0 ? blocks : 1) : most;
    least = least < 1 ? 1 : least > most ? most : least;
    /* while at least t chunks of the largest size are left, every chunk is of that size */
    p->rows = rows;
    size_t all = (size_t)(blocks > 0 ? blocks : 0), team_most = (size_t)t * most;
    p->n_fixed = all >= team_most ? (int)((all - team_most) / most + 1) : 0;
    p->fixed_rows = (int)most * MATVEC_ROW_BLOCK;
    int done = p->n_fixed * (int)most, n_tail = 0;
    while (done < blocks) {
        int size = (blocks - done) / t;
        size = size < (int)least ? (int)least : size > (int)most ? (int)most : size;
        if (n_tail == MATVEC_TAIL_CHUNKS_MAX - 1) size = blocks - done; /* never: see MATVEC_PLAN_TEAM_MAX */
        p->tail[n_tail++] = done * MATVEC_ROW_BLOCK;
        done += size;
    }
    p->tail[n_tail] = rows;
    p->n_chunks = p->n_fixed + n_tail;
}

void matvec_plan_chunk(const struct matvec_plan *p, int c, int *first, int *n) {
    if (c < p->n_fixed) {
        *first = c * p->fixed_rows;
        *n = p->rows - *first < p->fixed_rows ? p->rows - *first : p->fixed_rows;
        return;
    }
    *first = p->tail[c - p->n_fixed];
    int end = p->tail[c - p->n_fixed + 1];
    *n = (end < p->rows ? end : p->rows) - *first;
}

/* Below this many weights a matvec is not worth waking a team for. */
#define MATVEC_PARALLEL_MIN ((size_t)1 << 16)

int matvec_openblas(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
                    int panel_cols, const char **why);

/* -1 until first use; then an enum kernel_prefetch. Relaxed atomics, as the ISA's. */
static int kernel_prefetch_cpu = -1;
static int kernel_prefetch_forced = -1;

/* The CPU's family as CPUID leaf 1 gives it (base + extended family), and whether its vendor is AMD. */
/* CPUID's display family and, in *model, its display model (extended bits for families 6 and 0Fh+) */
static unsigned cpu_family_model(bool *amd, unsigned *model) {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    *amd = false, *model = 0;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return 0;
    *amd = ebx == 0x68747541u && edx == 0x69746e65u && ecx == 0x444d4163u; /* "AuthenticAMD" */
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    unsigned base = (eax >> 8) & 0xfu;
    *model = ((eax >> 4) & 0xfu) | (base == 0x6u || base == 0xfu ? ((eax >> 16) & 0xfu) << 4 : 0u);
    return base == 0xfu ? base + ((eax >> 20) & 0xffu) : base;
}

static unsigned cpu_family(bool *amd) {
    unsigned model;
    return cpu_family_model(amd, &model);
}

/* Zen 5 (AMD family 1Ah) and later stream faster through L2; every other CPU keeps the L1 profile measured
 * on Zen 4 (family 19h, which Zen 3 shares). */
#define KERNEL_PREFETCH_L2_AMD_FAMILY 0x1Au

enum kernel_prefetch kernel_prefetch_active(void) {
    int forced = __atomic_load_n(&kernel_prefetch_forced, __ATOMIC_RELAXED);
    if (forced >= 0) return (enum kernel_prefetch)forced;
    int cpu = __atomic_load_n(&kernel_prefetch_cpu, __ATOMIC_RELAXED);
    if (cpu < 0) {
        bool amd;
        unsigned family = cpu_family(&amd);
        cpu = amd && family >= KERNEL_PREFETCH_L2_AMD_FAMILY ? KERNEL_PREFETCH_L2 : KERNEL_PREFETCH_L1;
        __atomic_store_n(&kernel_prefetch_cpu, cpu, __ATOMIC_RELAXED);
    }
    return (enum kernel_prefetch)cpu;
}

void kernel_prefetch_force(enum kernel_prefetch p) {
    __atomic_store_n(&kernel_prefetch_forced, p == KERNEL_PREFETCH_COUNT ? -1 : (int)p, __ATOMIC_RELAXED);
}

/* The families measured (docs/machines.md): AMD 19h (Zen 3 and 4; the L1 profile was tuned on Zen 4) and
 * 1Ah (Zen 5, the L2 profile). */
bool kernel_prefetch_measured_on(bool amd, unsigned family, unsigned model) {
    return amd ? family == 0x19u || family == 0x1Au : family == 0x6u && model == 207u;
}

const char *kernel_prefetch_describe(void) {
    bool amd;
    unsigned model, family = cpu_family_model(&amd, &model);
    const bool forced = __atomic_load_n(&kernel_prefetch_forced, __ATOMIC_RELAXED) >= 0;
    static _Thread_local char buf[192];
    char which[48] = "";
    if (!amd) snprintf(which, sizeof which, " model %u", model); /* Intel's profile: measured on one model */
    snprintf(buf, sizeof buf, "the %s prefetch profile (%s family %Xh%s%s)",
             kernel_prefetch_active() == KERNEL_PREFETCH_L2 ? "L2" : "L1", amd ? "AMD" : "CPU", family, which,
             forced ? ", forced"
             : kernel_prefetch_measured_on(amd, family, model)
                 ? ""
                 : ", a default not measured on this family: forge-tune "
                   "--profile l1|l2 measures both");
    return buf;
}

const char *kernel_matvec_describe(void) {
    enum kernel_isa isa = kernel_isa_active();
    if (kernel_prefetch_active() != KERNEL_PREFETCH_L2 || isa == KERNEL_ISA_SCALAR) return "";
    return isa == KERNEL_ISA_AVX512 ? "; the bf16 matvec reads two rows at a time, in AVX2's loop"
                                    : "; the bf16 matvec reads two rows at a time";
}

/* -1 until first use, then whether the CPU has AVX512_VNNI (relaxed atomics, as the ISA's). */
static int kernel_vnni = -1;

bool kernel_has_avx512_vnni(void) {
    int v = __atomic_load_n(&kernel_vnni, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx512vnni") ? 1 : 0;
        __atomic_store_n(&kernel_vnni, v, __ATOMIC_RELAXED);
    }
    return v;
}

/* The block matvec's loops for the active ISA: AVX-512 runs VNNI's where the CPU has it, else AVX2's. */
static const struct quant_ops *quant_ops_active(void) {
    switch (kernel_isa_active()) {
    case KERNEL_ISA_AVX512:
        return kernel_has_avx512_vnni() ? &quant_ops_avx512 : &quant_ops_avx2;
    case KERNEL_ISA_AVX2:
        return &quant_ops_avx2;
    default:
        return &quant_ops_scalar;
    }
}

/* Whether the block matvec takes its row groups two at a time: on the L2 profile, where the ISA has it. */
static bool quant_pairs(const struct quant_ops *ops) {
    return ops->pairs_name && kernel_prefetch_active() == KERNEL_PREFETCH_L2;
}

const char *kernel_quant_describe(void) {
    const struct quant_ops *ops = quant_ops_active();
    return quant_pairs(ops) ? ops->pairs_name : ops->name;
}

/* y[r] (+)= W[r] . x for `rows` rows of a block format from w (cols weights a row) against a's blocks from
 * blk0 on. */
static void quant_rows(float *y, const void *w, enum fr_dtype t, const struct quant_act *a, int blk0,
                       int rows, int cols, int add) {
    const struct quant_ops *ops = quant_ops_active();
    const bool pairs = quant_pairs(ops);
    if (t == FR_DTYPE_Q8_0)
        (pairs ? ops->matvec_q8_0_pairs : ops->matvec_q8_0)(y, w, a, blk0, rows, cols / QUANT_BLOCK, add);
    else
        (pairs ? ops->matvec_q4_0_pairs : ops->matvec_q4_0)(y, w, a, blk0, rows, cols / QUANT_BLOCK, add);
}

void matvec_quant_thread(float *y, const void *w, enum fr_dtype t, const float *x, int rows, int cols,
                         long passes) {
    const struct quant_act *a = quant_act_quantize_by(x, cols, quant_ops_active()->act_blocks);
    for (long p = 0; p < passes; p++) quant_rows(y, w, t, a, 0, rows, cols, 0);
}

typedef void (*matvec_bf16_loop)(float *, const uint16_t *, const float *, int, int, int);

/* Chunk c of the plan over one panel: the panel's block of rows (row stride `cols`, its width) starts at w
 * and meets x's slice at x; with `add` the products are added to y. */
static void matvec_chunk(const struct matvec_plan *plan, int c, float *y, const void *w, enum fr_dtype wtype,
                         const float *x, int cols, int add, const struct kernel_ops *ops,
                         matvec_bf16_loop bf16_loop, const struct quant_act *qa, int blk0) {
    int r0, n;
    matvec_plan_chunk(plan, c, &r0, &n);
    size_t off = (size_t)r0 * (size_t)cols;
    if (qa) /* a block format: x's blocks from the panel's first column on */
        quant_rows(y + r0, (const unsigned char *)w + fr_dtype_bytes(wtype, off), wtype, qa, blk0, n, cols,
                   add);
    else if (wtype == FR_DTYPE_BF16)
        bf16_loop(y + r0, (const uint16_t *)w + off, x, n, cols, add);
    else
        ops->matvec_f32(y + r0, (const float *)w + off, x, n, cols, add);
}

/* Work-shares the row chunks of each panel in turn over the current team: a kernel team's (team.h), else the
 * OpenMP team (a team of one outside any parallel region). Each panel ends at the team's barrier, so the next
 * one adds to finished sums. */
static void matvec_chunks(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
                          int pw, const struct kernel_ops *ops, int threads) {
    matvec_bf16_loop bf16_loop = kernel_prefetch_active() == KERNEL_PREFETCH_L2 ? ops->matvec_bf16_l2
                                 : threads == 1                                 ? ops->matvec_bf16_solo
                                                                                : ops->matvec_bf16;
    /* a block format's x is quantised by each thread for itself (kernels/quant.h) */
    const struct quant_act *qa =
        fr_dtype_is_block(wtype) ? quant_act_quantize_by(x, cols, quant_ops_active()->act_blocks) : NULL;
    for (int p = 0; p < col_panel_count(cols, pw); p++) {
        int n = col_panel_cols(cols, pw, p), blk0 = p * pw / QUANT_BLOCK;
        const void *wp = (const unsigned char *)w + fr_dtype_bytes(wtype, col_panel_start(rows, pw, p));
        const float *xp = x + (size_t)p * (size_t)pw;
        struct matvec_plan plan;
        matvec_plan_make(&plan, rows, fr_dtype_bytes(wtype, (size_t)n), kernel_team_size());
        if (kernel_team_active()) {
            struct kernel_share share;
            kernel_share_begin(&share, plan.n_chunks);
            for (int c; (c = kernel_share_next(&share)) >= 0;)
                matvec_chunk(&plan, c, y, wp, wtype, xp, n, p > 0, ops, bf16_loop, qa, blk0);
            kernel_share_end(&share);
            continue;
        }
#pragma omp for schedule(dynamic, 1)
        for (int c = 0; c < plan.n_chunks; c++)
            matvec_chunk(&plan, c, y, wp, wtype, xp, n, p > 0, ops, bf16_loop, qa, blk0);
    }
}

bool matvec_opens_team(int rows, int cols) {
    return rows > 0 && cols > 0 && (size_t)rows * (size_t)cols >= MATVEC_PARALLEL_MIN;
}

int matvec_panels(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
                  int panel_cols, enum matvec_backend backend, int threads, const char **why) {
    if (panel_cols < 1) {
        if (why) *why = "column panels of fewer than one column";
        return -1;
    }
    if (fr_dtype_is_block(wtype) &&
        (quant_check_cols(wtype, cols, why) || (panel_cols < cols && panel_cols % QUANT_BLOCK != 0))) {
        if (why && panel_cols < cols && panel_cols % QUANT_BLOCK != 0)
            *why = "column panels of a Q8_0 or Q4_0 matrix must be whole blocks of 32 columns";
        return -1;
    }
    if (fr_dtype_is_kquant(wtype)) { /* kernels/matvec_kquant.h, above this module */
        if (why) *why = "a K-quant matrix runs through gemm (kernels/gemm.h), not matvec";
        return -1;
    }
    if (backend == MATVEC_BACKEND_OPENBLAS)
        return matvec_openblas(y, w, wtype, x, rows, cols, panel_cols, why);
    if (backend == MATVEC_BACKEND_ONEDNN) /* one row of its matmul: x is [1][cols], y [1][rows] */
        return gemm_onednn(y, rows, w, wtype, x, cols, 1, rows, cols, panel_cols, threads, why);
    if (rows <= 0) return 0;
    if (cols <= 0) {
        memset(y, 0, (size_t)rows * sizeof *y);
        return 0;
    }
    const struct kernel_ops *ops = kernel_ops_active();
    if (kernel_team_shares()) {
        matvec_chunks(y, w, wtype, x, rows, cols, panel_cols, ops,
                      threads); /* ends with the team's barrier */
    } else {
#pragma omp parallel if (matvec_opens_team(rows, cols) && threads > 1) num_threads(threads > 1 ? threads : 1)
        matvec_chunks(y, w, wtype, x, rows, cols, panel_cols, ops, threads);
    }
    return 0;
}

const char *matvec_backend_name(enum matvec_backend backend) {
    switch (backend) {
    case MATVEC_BACKEND_OPENBLAS:
        return "openblas";
    case MATVEC_BACKEND_ONEDNN:
        return "onednn";
    default:
        return "forge";
    }
}

int matvec_backend_parse(const char *name, enum matvec_backend *backend) {
    for (int b = MATVEC_BACKEND_FORGE; name && b <= MATVEC_BACKEND_ONEDNN; b++)
        if (strcmp(name, matvec_backend_name((enum matvec_backend)b)) == 0) {
            *backend = (enum matvec_backend)b;
            return 0;
        }
    return -1;
}

int matvec(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
           enum matvec_backend backend, int threads, const char **why) {
    return matvec_panels(y, w, wtype, x, rows, cols, cols > 0 ? cols : 1, backend, threads, why);
}

/* ---- elementwise and norms ---- */

void rmsnorm(float *out, const float *x, const float *w, int n, float eps) {
    if (n <= 0) return;
    const struct kernel_ops *ops = kernel_ops_active();
    float ss = ops->sum_squares(x, n);
    float s = 1.0f / sqrtf(ss / (float)n + eps);
    ops->scale_mul(out, x, w, s, n);
}

void rmsnorm_heads(float *x, const float *w, int n_heads, int head_dim, float eps) {
    for (int h = 0; h < n_heads; h++)
        rmsnorm(x + (size_t)h * (size_t)head_dim, x + (size_t)h * (size_t)head_dim, w, head_dim, eps);
}

void vec_add(float *y, const float *x, int n) {
    if (n > 0) kernel_ops_active()->vec_add(y, x, n);
}

void swiglu(float *out, const float *gate, const float *up, int n) {
    if (n > 0) kernel_ops_active()->swiglu(out, gate, up, n);
}

void embed_gather(float *out, const void *table, enum fr_dtype ttype, int rows, int token, int hidden) {
    if (hidden <= 0) return;
    size_t off = (size_t)token * (size_t)hidden;
    if (fr_dtype_is_block(ttype)) /* one row dequantised, from the table's memory order */
        quant_matrix_dequantize(out, ttype, table, rows, hidden, token, 0, hidden);
    else if (ttype == FR_DTYPE_BF16)
        kernel_ops_active()->bf16_to_f32(out, (const uint16_t *)table + off, hidden);
    else
        memcpy(out, (const float *)table + off, (size_t)hidden * sizeof *out);
}

/* ---- RoPE ---- */

void rope_tables(float *cos_t, float *sin_t, int head_dim, int pos, double theta) {
    int half = head_dim / 2;
    for (int i = 0; i < half; i++) {
        double angle = (double)pos * pow(theta, -2.0 * (double)i / (double)head_dim);
        cos_t[i] = (float)cos(angle);
        sin_t[i] = (float)sin(angle);
    }
}

void rope_apply(float *x, const float *cos_t, const float *sin_t, int n_heads, int head_dim) {
    if (n_heads > 0 && head_dim >= 2) kernel_ops_active()->rope_apply(x, cos_t, sin_t, n_heads, head_dim);
}

/* ---- KV cache ---- */

void kv_store(void *dst, enum fr_dtype kvtype, const float *src, int n) {
    if (n <= 0) return;
    if (kvtype == FR_DTYPE_BF16)
        kernel_ops_active()->f32_to_bf16((uint16_t *)dst, src, n);
    else
        memcpy(dst, src, (size_t)n * sizeof *src);
}

/* ---- attention ---- */

struct attn_args {
    float *out;
    const float *q;
    const void *k, *v;
    size_t head_stride; /* elements from one KV head's rows to the next */
    int kv_bf16, n_pos, n_heads, n_kv, head_dim;
    float *scratch; /* n_heads * n_pos floats */
    const struct kernel_ops *ops;
};

/* How many blocks ahead attn_partial's L2 prefetch runs: two on the L1 profile (Zen 4), one on the L2 profile
 * (Zen 5). One block ahead is the block the L1 prefetch reaches: the loops then leave out the L2 prefetch
 * inside a range (attn_partial_t). 4 or 8 blocks read lower on both (docs/tuning/attention.md, "Far prefetch
 * distance"). */
static int attn_pf_blocks(void) {
    return kernel_prefetch_active() == KERNEL_PREFETCH_L2 ? 1 : 2;
}

/* Rows [p0, p1) of KV head kh. */
static struct attn_rows attn_head_rows(const struct attn_args *a, int kh, int p0, int p1) {
    size_t at = ((size_t)kh * a->head_stride + (size_t)p0 * (size_t)a->head_dim) * (a->kv_bf16 ? 2 : 4);
    return (struct attn_rows){(const char *)a->k + at, (const char *)a->v + at, p1 - p0};
}

/* The team's split (flash-decoding): each KV head's positions are cut into the same number of equal pieces
 * (whole blocks), as few as make the pieces a multiple of the team: whole heads when the team divides the KV
 * heads, all but the last round of them (attn_plan_make). The pieces are numbered head by head (a head's
 * slots are adjacent for attn_merge) but handed out piece by piece across the heads (attn_piece_at): the
 * team's threads stream different heads at the same time rather than two places of one head, which cost the
 * most (docs/tuning/attention.md, "Team split"). */
#define ATT_PIECE_MIN_BLOCKS 4

/* One piece of the team split: KV head kh's positions [p0, p1). */
struct attn_piece {
    int kh, p0, p1;
};

/* The fewest positions of a piece: at least ATT_PIECE_MIN_BLOCKS blocks and block + head_dim + 4 positions,
 * so that a piece's slot of scratch (attention_team: group * (block + head_dim + 2) floats) leaves at least
 * 2 * group of the group * positions floats its positions own: the slots never reach the 1 + n_kv ints at
 * scratch's end that hold the team's counters (attn_counters). */
static int attn_piece_min(const struct attn_args *a) {
    int pb = KERNEL_ATT_BLOCK, blocks = (pb + a->head_dim + 4 + pb - 1) / pb;
    return (blocks > ATT_PIECE_MIN_BLOCKS ? blocks : ATT_PIECE_MIN_BLOCKS) * pb;
}

static int gcd_int(int a, int b) {
    while (b) {
        int r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* How many pieces each head is cut into where the team does not divide the KV heads: threads / gcd(n_kv,
 * threads), fewer where the pieces would be shorter than attn_piece_min (each is at least n_pos / cuts -
 * block long). */
static int attn_cuts(const struct attn_args *a, int threads) {
    const int t = threads > 0 ? threads : 1;
    int cuts = t / gcd_int(a->n_kv, t), most = a->n_pos / (attn_piece_min(a) + KERNEL_ATT_BLOCK);
    cuts = cuts < most ? cuts : most;
    return cuts > 1 ? cuts : 1;
}

/* Where the team divides the KV heads, each thread's share is whole heads; but a thread whose core runs
 * slower for a while (on a VM, most likely a busy sibling hyperthread on the host) finishes its last head
 * after the others, which wait at the barrier that ends the call, for up to a head's time. So the last round
 * of heads (one a thread) is cut into ATT_TAIL_CUTS pieces each, handed out across those heads after the
 * whole ones, and a faster thread takes more of them: 35 of 38 alternated pairs ran faster so, and 8 or 16
 * pieces did no better than 4 (docs/tuning/attention.md, "Team split"). */
#define ATT_TAIL_CUTS 4

/* The plan every thread of a team of `threads` follows: heads [0, whole) handed out whole, then each of the
 * heads [whole, n_kv) in `cuts` pieces, n tickets in all. */
struct attn_plan {
    int whole, cuts, n;
};

/* Every head handed out whole, none cut. */
static struct attn_plan attn_plan_whole(const struct attn_args *a) {
    return (struct attn_plan){a->n_kv, 1, a->n_kv};
}

static struct attn_plan attn_plan_make(const struct attn_args *a, int threads) {
    int cuts = attn_cuts(a, threads), tail = a->n_pos / (attn_piece_min(a) + KERNEL_ATT_BLOCK);
    tail = tail < ATT_TAIL_CUTS ? tail : ATT_TAIL_CUTS;
    if (cuts == 1 && threads > 1 && a->n_kv >= 2 * threads && tail > 1) /* the last round cut */
        return (struct attn_plan){a->n_kv - threads, tail, a->n_kv - threads + threads * tail};
    if (cuts == 1) return attn_plan_whole(a);
    return (struct attn_plan){0, cuts, a->n_kv * cuts};
}

/* The piece the team's ticket-th claim gets: the whole heads in order, then every cut head's first piece,
 * every one's second, ...; *slot is the piece's slot of scratch (-1: a whole head's, which needs none),
 * numbered head by head so that a head's slots are adjacent (attn_merge). */
static struct attn_piece attn_piece_at(const struct attn_args *a, const struct attn_plan *p, int ticket,
                                       int *slot) {
    if (ticket < p->whole) {
        *slot = -1;
        return (struct attn_piece){ticket, 0, a->n_pos};
    }
    const int pb = KERNEL_ATT_BLOCK, heads = a->n_kv - p->whole, u = ticket - p->whole, j = u / heads,
              kh = p->whole + u % heads;
    *slot = (kh - p->whole) * p->cuts + j;
    int p0 = (int)((long)a->n_pos * j / p->cuts / pb * pb),
        p1 = j + 1 == p->cuts ? a->n_pos : (int)((long)a->n_pos * (j + 1) / p->cuts / pb * pb);
    return (struct attn_piece){kh, p0, p1};
}

/* Whether the team split applies: every head holds a piece (n_pos >= attn_piece_min) and there are two
 * pieces or more. */
static bool attn_team_fits(const struct attn_args *a) {
    int least = attn_piece_min(a);
    return a->n_pos >= least && (a->n_kv >= 2 || a->n_pos >= 2 * least);
}

/* Whether a team shares whole heads below attn_piece_min: two KV heads or more, and more than one block of
 * positions. A whole head needs no slot of scratch (attention_team keeps its m, l and scores on the stack),
 * only the counters at scratch's end, which n_heads * n_pos floats then always hold. At one block of
 * positions and fewer the team was no faster than thread 0 alone (docs/tuning/attention.md, "Team split"). */
static bool attn_heads_fit(const struct attn_args *a) {
    return a->n_kv >= 2 && a->n_pos > KERNEL_ATT_BLOCK;
}

/* Normalizes out[h] by its softmax sum l[h]. */
static void attn_normalize(float *out, const float *l, int n_heads, int head_dim) {
    for (int h = 0; h < n_heads; h++) {
        float inv = 1.0f / l[h];
        for (int d = 0; d < head_dim; d++) out[(size_t)h * (size_t)head_dim + (size_t)d] *= inv;
    }
}

/* One thread: KV head after KV head, the output accumulating in place, the prefetch running on from one
 * head's rows into the next's; one block of scores fits scratch since block <= n_pos. */
static void attention_single(const struct attn_args *a) {
    int D = a->head_dim, group = a->n_heads / a->n_kv;
    int pb = a->n_pos < KERNEL_ATT_BLOCK ? a->n_pos : KERNEL_ATT_BLOCK;
    float m[group], l[group];
    for (int kh = 0; kh < a->n_kv; kh++) {
        struct attn_rows cur = attn_head_rows(a, kh, 0, a->n_pos);
        struct attn_rows next =
            kh + 1 < a->n_kv ? attn_head_rows(a, kh + 1, 0, a->n_pos) : (struct attn_rows){0};
        size_t at = (size_t)kh * (size_t)group * (size_t)D;
        a->ops->attn_partial(a->out + at, m, l, a->scratch, pb, a->q + at, &cur, &next, a->kv_bf16, group, D,
                             1.0f / sqrtf((float)D), kh > 0, attn_pf_blocks());
        attn_normalize(a->out + at, l, group, D);
    }
}

/* The team's counters, ints at scratch's end where no slot reaches (attn_piece_min): [-1] the next piece to
 * take, [-2 - kh] how many of KV head kh's pieces are done. Zeroed before a team starts on them. */
static int *attn_counters(const struct attn_args *a) {
    return (int *)(void *)(a->scratch + (size_t)a->n_heads * (size_t)a->n_pos);
}

static void attn_counters_zero(const struct attn_args *a) {
    int *end = attn_counters(a);
    for (int i = 1; i <= 1 + a->n_kv; i++) end[-i] = 0;
}

/* Merges the pieces [f, e) of one KV head, each slot (slot floats apart) holding o[group][head_dim], m[group]
 * and l[group], into its query heads' rows of out:
 *   M = max_c m_c,  out = sum_c exp(m_c - M) o_c / sum_c exp(m_c - M) l_c. */
static void attn_merge(const struct attn_args *a, int kh, int f, int e, size_t slot) {
    const int group = a->n_heads / a->n_kv, D = a->head_dim;
    const size_t gd = (size_t)group * (size_t)D;
    for (int j = 0; j < group; j++) {
        float mx = -INFINITY, sum = 0.0f;
        for (int c = f; c < e; c++) {
            float mc = a->scratch[(size_t)c * slot + gd + (size_t)j];
            mx = mc > mx ? mc : mx;
        }
        /* each piece's m[j] becomes its weight exp(m_c - M): only this call reads the head's slots */
        for (int c = f; c < e; c++) {
            float *mc = a->scratch + (size_t)c * slot + gd;
            mc[j] = expf(mc[j] - mx);
            sum += mc[j] * mc[(size_t)group + (size_t)j];
        }
        float inv = 1.0f / sum, *oh = a->out + (size_t)kh * gd + (size_t)j * (size_t)D;
        for (int d = 0; d < D; d++) oh[d] = 0.0f;
        for (int c = f; c < e; c++) {
            const float *oc = a->scratch + (size_t)c * slot + (size_t)j * (size_t)D;
            float wc = a->scratch[(size_t)c * slot + gd + (size_t)j] * inv;
            for (int d = 0; d < D; d++) oh[d] += wc * oc[d];
        }
    }
}

/* One thread's part of the team split (attn_plan_make): pieces handed out dynamically, each streaming its K
 * and V rows once for the head's query heads (kernel_ops.attn_partial). A head's only piece writes its rows
 * of out itself; the pieces of a cut head go to their slots of scratch, and whichever thread finishes the
 * head's last piece merges them (attn_merge), so no thread waits for another before the team's end.
 * Dynamic pieces rather than one static run per thread: a thread that loses its core for a while (a shared
 * machine) holds up the others by at most one piece, and any team size works, so the call also work-shares
 * inside a caller's parallel region. Each thread claims its next piece when it starts the current one, so
 * attn_partial's prefetch runs on from the current piece's last blocks into the next one's first: only a
 * thread's first piece (and a piece after one shorter than the prefetch distance, a whole head of few
 * positions) starts with a burst of fetches and nothing to compute. No thread prefetches lines of a piece it
 * has not claimed. */
static void attention_team(const struct attn_args *a, const struct attn_plan *p) {
    const int group = a->n_heads / a->n_kv, D = a->head_dim, pb = KERNEL_ATT_BLOCK, n = p->n;
    const size_t slot = (size_t)group * (size_t)(pb + D + 2), gd = (size_t)group * (size_t)D;
    int *counters = attn_counters(a), fetched = 0;
    const struct attn_rows none = {0};
    float head_mls[group * (pb + 2)]; /* a whole head's m, l and block of scores */
    /* attn_partial sets m and l before it reads them; zeroed anyway (36 floats at Qwen3-0.6B's group), so
     * that no checker takes the stack buffer for uninitialized */
    memset(head_mls, 0, sizeof head_mls);
    for (int c = __atomic_fetch_add(&counters[-1], 1, __ATOMIC_RELAXED); c < n;) {
        int next = __atomic_fetch_add(&counters[-1], 1, __ATOMIC_RELAXED), at, at_next;
        struct attn_piece pc = attn_piece_at(a, p, c, &at);
        struct attn_rows rows = attn_head_rows(a, pc.kh, pc.p0, pc.p1), ahead = none;
        if (next < n) {
            struct attn_piece pn = attn_piece_at(a, p, next, &at_next);
            ahead = attn_head_rows(a, pn.kh, pn.p0, pn.p1);
        }
        float *o = at < 0 ? a->out + (size_t)pc.kh * gd : a->scratch + (size_t)at * slot;
        float *m = at < 0 ? head_mls : a->scratch + (size_t)at * slot + gd, *l = m + group, *sbuf = l + group;
        a->ops->attn_partial(o, m, l, sbuf, pb, a->q + (size_t)pc.kh * gd, &rows, &ahead, a->kv_bf16, group,
                             D, 1.0f / sqrtf((float)D), fetched, attn_pf_blocks());
        if (at < 0)
            attn_normalize(o, l, group, D);
        else if (__atomic_add_fetch(&counters[-2 - pc.kh], 1, __ATOMIC_ACQ_REL) == p->cuts) {
            int first = (pc.kh - p->whole) * p->cuts; /* the head's other pieces are done */
            attn_merge(a, pc.kh, first, first + p->cuts, slot);
        }
        /* a piece of attn_pf_blocks() blocks or more fetched the next one's first blocks as it ended (a
         * whole head below attn_piece_min may be shorter) */
        fetched = rows.n >= pb * attn_pf_blocks();
        c = next;
    }
}

/* attention()'s arguments; false (out zeroed where it has rows) when there is nothing to attend to, or no
 * KV head to attend with. */
static bool attn_args_make(struct attn_args *a, float *out, const float *q, const void *k_cache,
                           const void *v_cache, enum fr_dtype kvtype, int n_pos, size_t head_stride,
                           int n_heads, int n_kv_heads, int head_dim, float *scratch) {
    if (n_heads <= 0 || head_dim <= 0 || n_kv_heads <= 0) return false;
    if (n_pos <= 0) {
        memset(out, 0, (size_t)n_heads * (size_t)head_dim * sizeof *out);
        return false;
    }
    *a = (struct attn_args){
        .out = out,
        .q = q,
        .k = k_cache,
        .v = v_cache,
        .head_stride = head_stride,
        .kv_bf16 = kvtype == FR_DTYPE_BF16,
        .n_pos = n_pos,
        .n_heads = n_heads,
        .n_kv = n_kv_heads,
        .head_dim = head_dim,
        .scratch = scratch,
        .ops = kernel_ops_active(),
    };
    return true;
}

void attention_serial(float *out, const float *q, const void *k_cache, const void *v_cache,
                      enum fr_dtype kvtype, int n_pos, size_t head_stride, int n_heads, int n_kv_heads,
                      int head_dim, float *scratch) {
    struct attn_args a;
    if (attn_args_make(&a, out, q, k_cache, v_cache, kvtype, n_pos, head_stride, n_heads, n_kv_heads,
                       head_dim, scratch))
        attention_single(&a);
}

int attention_team_syncs(int n_pos, int n_heads, int n_kv_heads, int head_dim) {
    if (n_pos < 1 || n_heads < 1 || n_kv_heads < 1 || head_dim < 1) return 0;
    /* the shape is all that attention's choice below looks at */
    const struct attn_args a = {.n_pos = n_pos, .n_heads = n_heads, .n_kv = n_kv_heads, .head_dim = head_dim};
    return attn_team_fits(&a) || attn_heads_fit(&a) ? 2 : 1;
}

void attention(float *out, const float *q, const void *k_cache, const void *v_cache, enum fr_dtype kvtype,
               int n_pos, size_t head_stride, int n_heads, int n_kv_heads, int head_dim, float *scratch,
               int threads) {
    struct attn_args a;
    if (!attn_args_make(&a, out, q, k_cache, v_cache, kvtype, n_pos, head_stride, n_heads, n_kv_heads,
                        head_dim, scratch))
        return;
    /* inside a team (a kernel team's or OpenMP's): pieces, or whole heads where the positions are too few
     * to cut, else thread 0 does what one thread does and the team's barrier (kernel_team_sync) keeps the
     * others from going on before */
    const bool in_team = kernel_team_shares(), fits = attn_team_fits(&a);
    if (in_team && (fits || attn_heads_fit(&a))) {
        /* the same plan in every thread; whole heads where the positions are too few to cut */
        struct attn_plan plan = fits ? attn_plan_make(&a, kernel_team_size()) : attn_plan_whole(&a);
        if (kernel_team_thread() == 0) attn_counters_zero(&a);
        kernel_team_sync(); /* no thread takes a piece before */
        attention_team(&a, &plan);
        kernel_team_sync();
        return;
    }
    if (!fits) {
        if (!in_team || kernel_team_thread() == 0) attention_single(&a);
        kernel_team_sync();
        return;
    }
    int nt = threads;
    struct attn_plan plan = attn_plan_make(&a, nt);
    if (nt < 2 || plan.n < 2) {
        attention_single(&a);
        return;
    }
    attn_counters_zero(&a);
#pragma omp parallel num_threads(nt < plan.n ? nt : plan.n)
    attention_team(&a, &plan);
}
