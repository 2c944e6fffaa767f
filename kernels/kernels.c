/* The public kernels of kernels.h: run-time ISA dispatch, argument shapes and OpenMP work splitting around
 * the per-ISA inner loops of kernel_ops.h. Every kernel here is checked against its _ref twin
 * (kernels_ref.c) for every ISA the CPU supports in tests/test_kernels_*.c.
 *
 * Threading: matvec and attention split their work over an OpenMP team. Called outside any parallel region
 * (the decode step calls them from the main thread) they open their own `omp parallel` region; called
 * inside an active one, they behave like an orphaned `omp for`: every thread of the team must make the same
 * call, each takes its share and all meet at a barrier before returning. */
#include <cpuid.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel_ops.h"
#include "kernels/kernels.h"

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
 * left divided by the team size, so that the threads finish together. Public matvec alternated with the
 * read in one process (Zen 5 VM, two threads, AVX2, the L2 loop, medians of 5-9, three runs, the read at
 * 50-75 GB/s), against fixed chunks of 1/(2 threads) of the matrix within [256 KiB, 2 MiB]: 4096 x 1024
 * 0.73-0.90 -> 0.79-0.92 of the read, 1024 x 3072 0.69-0.81 -> 0.72-0.85, 12288 x 1024 0.95 -> 0.94-0.98;
 * shrinking to 64 or 256 KiB instead of 128 about the same, to remaining / (2 threads) 0.01-0.04 lower. */
/* The tail shrinks as for at most this many threads: from 48 chunks of the largest size to ones of the
 * smallest (1/16 of it) takes about 48 ln 16 = 133 chunks, then at most 48 more, within
 * MATVEC_TAIL_CHUNKS_MAX. */
#define MATVEC_PLAN_TEAM_MAX 48
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
                    const char **why);

/* -1 until first use; then an enum kernel_prefetch. Relaxed atomics, as the ISA's. */
static int kernel_prefetch_cpu = -1;
static int kernel_prefetch_forced = -1;

/* The CPU's family as CPUID leaf 1 gives it (base + extended family), and whether its vendor is AMD. */
static unsigned cpu_family(bool *amd) {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    *amd = false;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return 0;
    *amd = ebx == 0x68747541u && edx == 0x69746e65u && ecx == 0x444d4163u; /* "AuthenticAMD" */
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    unsigned base = (eax >> 8) & 0xfu;
    return base == 0xfu ? base + ((eax >> 20) & 0xffu) : base;
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

const char *kernel_prefetch_describe(void) {
    bool amd;
    unsigned family = cpu_family(&amd);
    static _Thread_local char buf[96];
    snprintf(buf, sizeof buf, "the %s prefetch profile (%s family %Xh%s)",
             kernel_prefetch_active() == KERNEL_PREFETCH_L2 ? "L2" : "L1", amd ? "AMD" : "CPU", family,
             __atomic_load_n(&kernel_prefetch_forced, __ATOMIC_RELAXED) >= 0 ? ", forced" : "");
    return buf;
}

/* Work-shares the row chunks over the current team (a team of one outside any parallel region). */
static void matvec_chunks(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
                          const struct kernel_ops *ops) {
    void (*bf16_loop)(float *, const uint16_t *, const float *, int, int) =
        kernel_prefetch_active() == KERNEL_PREFETCH_L2 ? ops->matvec_bf16_l2 : ops->matvec_bf16;
    struct matvec_plan plan;
    matvec_plan_make(&plan, rows, (size_t)cols * fr_dtype_size(wtype), omp_get_num_threads());
#pragma omp for schedule(dynamic, 1)
    for (int c = 0; c < plan.n_chunks; c++) {
        int r0, n;
        matvec_plan_chunk(&plan, c, &r0, &n);
        size_t off = (size_t)r0 * (size_t)cols;
        if (wtype == FR_DTYPE_BF16)
            bf16_loop(y + r0, (const uint16_t *)w + off, x, n, cols);
        else
            ops->matvec_f32(y + r0, (const float *)w + off, x, n, cols);
    }
}

bool matvec_opens_team(int rows, int cols) {
    return rows > 0 && cols > 0 && (size_t)rows * (size_t)cols >= MATVEC_PARALLEL_MIN;
}

int matvec(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
           enum matvec_backend backend, const char **why) {
    if (backend == MATVEC_BACKEND_OPENBLAS) return matvec_openblas(y, w, wtype, x, rows, cols, why);
    if (rows <= 0) return 0;
    if (cols <= 0) {
        memset(y, 0, (size_t)rows * sizeof *y);
        return 0;
    }
    const struct kernel_ops *ops = kernel_ops_active();
    if (omp_in_parallel()) {
        matvec_chunks(y, w, wtype, x, rows, cols, ops); /* ends with the work-share's barrier */
    } else {
#pragma omp parallel if (matvec_opens_team(rows, cols))
        matvec_chunks(y, w, wtype, x, rows, cols, ops);
    }
    return 0;
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

void embed_gather(float *out, const void *table, enum fr_dtype ttype, int token, int hidden) {
    if (hidden <= 0) return;
    size_t off = (size_t)token * (size_t)hidden;
    if (ttype == FR_DTYPE_BF16)
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

/* How many blocks ahead attn_partial's L2 prefetch runs. Attention alone over 28 layers' KV at 1024 positions
 * alternated with the read (Zen 5 VM, medians of 7, two runs): 2 blocks AVX2 0.62-0.64 / 0.70-0.73 of the
 * read on one / two threads, AVX-512 0.71-0.73 / 0.53-0.58; 1 block 0.69-0.73 / 0.77-0.83 and 0.80-0.81 /
 * 0.61-0.66 (4096 positions, AVX2: 0.66 / 0.49 -> 0.77 / 0.54); 4 or 8 blocks lower than 2; measured again
 * later, two threads at 1024 positions, 2 or 4 blocks read AVX2 0.51-0.55 against 0.61 for 1. On Zen 4 one
 * block read 0.58-0.72 (AVX2) against 0.80-0.85 for two (kernels_simd_body.h). One block ahead is the block
 * the L1 prefetch reaches: the loops then leave out the L2 prefetch inside a range (attn_partial_t). */
static int attn_pf_blocks(void) {
    return kernel_prefetch_active() == KERNEL_PREFETCH_L2 ? 1 : 2;
}

/* Rows [p0, p1) of KV head kh. */
static struct attn_rows attn_head_rows(const struct attn_args *a, int kh, int p0, int p1) {
    size_t at = ((size_t)kh * a->head_stride + (size_t)p0 * (size_t)a->head_dim) * (a->kv_bf16 ? 2 : 4);
    return (struct attn_rows){(const char *)a->k + at, (const char *)a->v + at, p1 - p0};
}

/* Positions per piece of the team split, pieces being parts of one KV head's positions: whole blocks,
 * about n_pos / (ATT_PIECES_PER_THREAD * threads / n_kv) so that each thread streams long runs (a whole
 * head when the heads are enough), but at least ATT_PIECE_MIN_BLOCKS blocks and at least
 * block + head_dim + 3 positions, so that a piece's slot of scratch (see attention_team) fits in the
 * group * piece floats of scratch its positions own with `group` to spare: the last float of
 * scratch[n_heads * n_pos] is never a slot's, and holds the team's piece counter. */
#define ATT_PIECE_MIN_BLOCKS  4
#define ATT_PIECES_PER_THREAD 4
static int attn_piece_positions(const struct attn_args *a, int threads) {
    int need = KERNEL_ATT_BLOCK + a->head_dim + 3, blocks = (need + KERNEL_ATT_BLOCK - 1) / KERNEL_ATT_BLOCK;
    int pieces = ATT_PIECES_PER_THREAD * (threads > 0 ? threads : 1);
    int per_head = (pieces + a->n_kv - 1) / a->n_kv, share = a->n_pos / per_head / KERNEL_ATT_BLOCK;
    if (blocks < ATT_PIECE_MIN_BLOCKS) blocks = ATT_PIECE_MIN_BLOCKS;
    return (share > blocks ? share : blocks) * KERNEL_ATT_BLOCK;
}

/* Pieces per KV head of the split over `threads`: the last one takes the remainder, so there are
 * n_pos / piece of them (0 when n_pos is shorter than the smallest piece). */
static int attn_pieces_per_head(const struct attn_args *a, int threads) {
    return a->n_pos / attn_piece_positions(a, threads);
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

/* The team's piece counter: the last float of scratch, which no piece's slot reaches
 * (attn_piece_positions); an int stored there, taken with atomic adds. */
static int *attn_counter(const struct attn_args *a) {
    return (int *)(void *)(a->scratch + (size_t)a->n_heads * (size_t)a->n_pos - 1);
}

/* Flash-decoding over the team: each KV head's positions are cut into pieces (attn_piece_positions: whole
 * heads when there are at least ATT_PIECES_PER_THREAD per thread), numbered head by head and handed out
 * dynamically; a piece streams its K and V rows once for the head's query heads (kernel_ops.attn_partial)
 * into its own slot of scratch: the unnormalized output o[group][head_dim], running max m[group] and sum
 * l[group], and one block of scores. After a barrier the pieces of each query head are merged:
 *   M = max_c m_c,  out = sum_c exp(m_c - M) o_c / sum_c exp(m_c - M) l_c.
 * Dynamic pieces rather than one static run per thread: a thread that loses its core for a while (a shared
 * machine) holds up the barrier by at most one piece instead of half the cache, and any team size works,
 * so the call also works-shares inside a caller's parallel region. Each thread claims its next piece when
 * it starts the current one (an atomic counter, zeroed by the caller before the team starts on it), so
 * attn_partial's prefetch runs on from the current piece's last blocks into the next one's first: only a
 * thread's first piece starts with a burst of fetches and nothing to compute, and no piece ends with
 * compute and nothing to fetch. No thread prefetches lines of a piece it has not claimed. */
static void attention_team(const struct attn_args *a) {
    int H = a->n_heads, D = a->head_dim, group = a->n_heads / a->n_kv, pb = KERNEL_ATT_BLOCK;
    int nt = omp_get_num_threads(), piece = attn_piece_positions(a, nt),
        per_head = attn_pieces_per_head(a, nt);
    int n_pieces = a->n_kv * per_head;
    size_t slot = (size_t)group * (size_t)(pb + D + 2), gd = (size_t)group * (size_t)D;
    int *counter = attn_counter(a), fetched = 0;
    const struct attn_rows none = {0};
    for (int c = __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED); c < n_pieces;) {
        int next = __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
        struct attn_rows rows[2];
        for (int i = 0; i < 2; i++) { /* this piece's rows and the next one's */
            int p = i ? next : c, kh = p / per_head, j = p % per_head;
            if (p < n_pieces)
                rows[i] = attn_head_rows(a, kh, j * piece, j == per_head - 1 ? a->n_pos : (j + 1) * piece);
            else
                rows[i] = none;
        }
        float *o = a->scratch + (size_t)c * slot, *m = o + gd, *l = m + group, *sbuf = l + group;
        a->ops->attn_partial(o, m, l, sbuf, pb, a->q + (size_t)(c / per_head) * gd, &rows[0], &rows[1],
                             a->kv_bf16, group, D, 1.0f / sqrtf((float)D), fetched, attn_pf_blocks());
        /* a piece has at least ATT_PIECE_MIN_BLOCKS >= attn_pf_blocks() blocks: its last ones fetched the
         * next one's first */
        fetched = 1;
        c = next;
    }
#pragma omp barrier
#pragma omp for schedule(static)
    for (int h = 0; h < H; h++) {
        /* query head h is entry j of the slots of its KV head's pieces */
        size_t first = (size_t)(h / group) * (size_t)per_head, j = (size_t)(h % group);
        float mx = -INFINITY, sum = 0.0f;
        for (int c = 0; c < per_head; c++) {
            float mc = a->scratch[(first + (size_t)c) * slot + gd + j];
            mx = mc > mx ? mc : mx;
        }
        /* each piece's m[j] becomes its weight exp(m_c - M): only this iteration reads head h's entries */
        for (int c = 0; c < per_head; c++) {
            float *mc = a->scratch + (first + (size_t)c) * slot + gd;
            mc[j] = expf(mc[j] - mx);
            sum += mc[j] * mc[(size_t)group + j];
        }
        float inv = 1.0f / sum, *oh = a->out + (size_t)h * (size_t)D;
        for (int d = 0; d < D; d++) oh[d] = 0.0f;
        for (int c = 0; c < per_head; c++) {
            const float *oc = a->scratch + (first + (size_t)c) * slot + j * (size_t)D;
            float wc = a->scratch[(first + (size_t)c) * slot + gd + j] * inv;
            for (int d = 0; d < D; d++) oh[d] += wc * oc[d];
        }
    }
}

void attention(float *out, const float *q, const void *k_cache, const void *v_cache, enum fr_dtype kvtype,
               int n_pos, size_t head_stride, int n_heads, int n_kv_heads, int head_dim, float *scratch) {
    if (n_heads <= 0 || head_dim <= 0) return;
    if (n_pos <= 0) {
        memset(out, 0, (size_t)n_heads * (size_t)head_dim * sizeof *out);
        return;
    }
    struct attn_args a = {
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
    /* the smallest pieces: the most any team gets */
    int n_pieces = n_kv_heads * attn_pieces_per_head(&a, n_pos);
    if (omp_in_parallel()) {
        if (n_pieces >= 2) {
#pragma omp single
            *attn_counter(&a) = 0; /* the single's barrier: no thread takes a piece before */
            attention_team(&a);    /* ends with the merge's barrier */
        } else {
#pragma omp single
            attention_single(&a);
        }
        return;
    }
    int nt = omp_get_max_threads();
    if (n_pieces < 2 || nt < 2) {
        attention_single(&a);
        return;
    }
    *attn_counter(&a) = 0;
#pragma omp parallel num_threads(nt < n_pieces ? nt : n_pieces)
    attention_team(&a);
}
