/* GQA attention for every ISA the CPU supports against attention_ref, and both against a double-precision
 * attention written here from the definition (softmax(q K^T / sqrt(d)) V per query head, KV head h / group).
 *
 * Tolerance: q and K in [-1, 1] keep scaled scores within |s| <= sqrt(d); a score summed in f32 over d
 * products is off by at most d * u * sqrt(d) in absolute terms, which moves each probability by that much
 * relatively (d exp(s) = exp(s) ds), and the vector exp adds a few u. The output, a convex combination of V
 * rows with |v| <= 1, is then off by at most that relative error plus n_pos * u of its own f32 sum:
 * allowed 2e-5 absolute + 1e-4 relative (d = 128: d * u * sqrt(d) = 8.6e-5 worst case, typically far
 * less since the products cancel). bf16 K/V need no extra slack: every path widens the same bf16 values. */
#include "kernels/team.h"
#include "tests/kernels_test_util.h"

#define ATT_ATOL 2e-5
#define ATT_RTOL 1e-4

static double kv_val(const void *base, enum fr_dtype t, size_t i) {
    return t == FR_DTYPE_BF16 ? bf16_to_f32(((const uint16_t *)base)[i]) : ((const float *)base)[i];
}

/* The definition, in double throughout; KV head kh's rows start at element kh * stride. */
static void attention_double(float *out, const float *q, const void *k, const void *v, enum fr_dtype t,
                             int n_pos, size_t stride, int n_heads, int n_kv, int hd) {
    double *s = test_alloc((size_t)n_pos * sizeof *s);
    for (int h = 0; h < n_heads; h++) {
        int kh = h / (n_heads / n_kv);
        double mx = -INFINITY, sum = 0.0;
        for (int p = 0; p < n_pos; p++) {
            double acc = 0.0;
            for (int d = 0; d < hd; d++)
                acc += (double)q[h * hd + d] * kv_val(k, t, kh * stride + (size_t)p * hd + d);
            s[p] = acc / sqrt((double)hd);
            mx = fmax(mx, s[p]);
        }
        for (int p = 0; p < n_pos; p++) sum += exp(s[p] - mx);
        for (int d = 0; d < hd; d++) {
            double acc = 0.0;
            for (int p = 0; p < n_pos; p++)
                acc += exp(s[p] - mx) / sum * kv_val(v, t, kh * stride + (size_t)p * hd + d);
            out[h * hd + d] = (float)acc;
        }
    }
    free(s);
}

struct att_buf {
    float *q, *out, *ref, *dbl, *scratch;
    void *k, *v;
    size_t stride; /* elements from one KV head's rows to the next */
};

/* NaN in every element of each KV head's `gap` rows after its n_pos ones (a cache sized for more positions
 * than are cached): any read of them makes the output NaN. */
static void att_poison_gaps(void *kv, enum fr_dtype t, int n_pos, int gap, int n_kv, int hd) {
    size_t stride = (size_t)(n_pos + gap) * hd;
    for (int kh = 0; kh < n_kv; kh++)
        for (size_t i = (size_t)kh * stride + (size_t)n_pos * hd; i < (size_t)(kh + 1) * stride; i++) {
            if (t == FR_DTYPE_BF16)
                ((uint16_t *)kv)[i] = 0x7fc0;
            else
                ((float *)kv)[i] = NAN;
        }
}

static struct att_buf att_make(struct test_rng *rng, enum fr_dtype t, int n_pos, int gap, int n_heads,
                               int n_kv, int hd) {
    struct att_buf b;
    b.stride = (size_t)(n_pos + gap) * hd;
    size_t nq = (size_t)n_heads * hd, nkv = b.stride * n_kv;
    b.q = test_alloc(nq * 4), b.out = test_alloc(nq * 4), b.ref = test_alloc(nq * 4),
    b.dbl = test_alloc(nq * 4);
    b.scratch = test_alloc((size_t)n_heads * n_pos * 4);
    b.k = test_alloc(nkv * fr_dtype_size(t)), b.v = test_alloc(nkv * fr_dtype_size(t));
    test_fill(rng, b.q, nq, -1.0f, 1.0f);
    if (t == FR_DTYPE_BF16) {
        test_fill_bf16(rng, b.k, nkv, -1.0f, 1.0f);
        test_fill_bf16(rng, b.v, nkv, -1.0f, 1.0f);
    } else {
        test_fill(rng, b.k, nkv, -1.0f, 1.0f);
        test_fill(rng, b.v, nkv, -1.0f, 1.0f);
    }
    att_poison_gaps(b.k, t, n_pos, gap, n_kv, hd);
    att_poison_gaps(b.v, t, n_pos, gap, n_kv, hd);
    return b;
}

static void att_free(struct att_buf *b) {
    free(b->q), free(b->out), free(b->ref), free(b->dbl), free(b->scratch), free(b->k), free(b->v);
}

/* Checks ref against the double definition, then every ISA, on both prefetch profiles, against ref. */
static void att_check_buf(struct att_buf *b, enum fr_dtype t, int n_pos, int n_heads, int n_kv, int hd) {
    size_t nq = (size_t)n_heads * hd;
    char what[128];
    attention_ref(b->ref, b->q, b->k, b->v, t, n_pos, b->stride, n_heads, n_kv, hd, b->scratch);
    attention_double(b->dbl, b->q, b->k, b->v, t, n_pos, b->stride, n_heads, n_kv, hd);
    snprintf(what, sizeof what, "attention_ref vs double %s pos=%d h=%d/%d d=%d", fr_dtype_name(t), n_pos,
             n_heads, n_kv, hd);
    cr_expect(test_close(what, b->ref, b->dbl, nq, ATT_ATOL, ATT_RTOL, NULL), "%s", what);
    FOR_EACH_ISA(isa) {
        /* both prefetch profiles (the far prefetch 2 or 1 blocks ahead), whichever this CPU would pick */
        for (int pf = 0; pf < KERNEL_PREFETCH_COUNT; pf++) {
            kernel_prefetch_force((enum kernel_prefetch)pf);
            for (size_t i = 0; i < nq; i++) b->out[i] = NAN;
            attention(b->out, b->q, b->k, b->v, t, n_pos, b->stride, n_heads, n_kv, hd, b->scratch,
                      kernel_team_procs());
            kernel_prefetch_force(KERNEL_PREFETCH_COUNT);
            snprintf(what, sizeof what, "attention %s %s pos=%d h=%d/%d d=%d, prefetch profile L%d",
                     kernel_isa_name(isa), fr_dtype_name(t), n_pos, n_heads, n_kv, hd, pf + 1);
            cr_expect(test_close(what, b->out, b->ref, nq, ATT_ATOL, ATT_RTOL, NULL), "%s", what);
        }
    }
}

/* att_check_buf on random q, K and V; `gap` poisoned rows after each KV head's. */
static void att_check(enum fr_dtype t, int n_pos, int gap, int n_heads, int n_kv, int hd, uint64_t seed) {
    struct test_rng rng = {seed};
    struct att_buf b = att_make(&rng, t, n_pos, gap, n_heads, n_kv, hd);
    att_check_buf(&b, t, n_pos, n_heads, n_kv, hd);
    att_free(&b);
}

Test(kernels_attention, gqa_4_2_d64_positions_1_to_37) {
    for (int t = 0; t < 2; t++)
        for (int n_pos = 1; n_pos <= 37; n_pos++)
            att_check((enum fr_dtype)t, n_pos, n_pos % 3, 4, 2, 64, 100 + (uint64_t)n_pos);
}

Test(kernels_attention, gqa_shapes_d128_and_odd) {
    for (int t = 0; t < 2; t++) {
        att_check((enum fr_dtype)t, 300, 0, 16, 8, 128, 1);   /* Qwen3-0.6B's heads, split by head */
        att_check((enum fr_dtype)t, 1000, 24, 16, 8, 128, 5); /* Qwen3-0.6B's heads, a cache with room */
        att_check((enum fr_dtype)t, 700, 5, 6, 1, 128, 2);    /* one KV head, positions split */
        att_check((enum fr_dtype)t, 400, 3, 32, 8, 128, 7);   /* Qwen3-4B's heads: group of 4 */
        att_check((enum fr_dtype)t, 70, 2, 4, 4, 36, 3);      /* no grouping, head_dim not a multiple of 16 */
        att_check((enum fr_dtype)t, 65, 1, 8, 2, 64, 4);      /* group of 4 */
        att_check((enum fr_dtype)t, 170, 3, 6, 2, 64, 6);     /* group of 3: an odd head pair */
    }
}

/* Scores that rise or fall with the position all the way: each KV head's K rows are its first query head
 * scaled by 0.5 + p / n_pos, so that head's scores rise (every block raises the running max and rescales
 * what came before) and a head of the group whose q points the other way sees them fall (after the first
 * block none does). */
Test(kernels_attention, scores_rising_and_falling) {
    enum { P = 200, H = 4, KV = 2, D = 128 };
    for (int t = 0; t < 2; t++) {
        struct test_rng rng = {9};
        struct att_buf b = att_make(&rng, (enum fr_dtype)t, P, 3, H, KV, D);
        for (int d = 0; d < D; d++) b.q[3 * D + d] = -b.q[2 * D + d]; /* KV head 1's second head: opposite */
        for (int kh = 0; kh < KV; kh++)
            for (int p = 0; p < P; p++)
                for (int d = 0; d < D; d++) {
                    size_t i = (size_t)kh * b.stride + (size_t)p * D + (size_t)d;
                    float x = b.q[kh * (H / KV) * D + d] * (0.5f + (float)p / (float)P);
                    if (t == FR_DTYPE_BF16)
                        ((uint16_t *)b.k)[i] = bf16_from_f32(x);
                    else
                        ((float *)b.k)[i] = x;
                }
        att_check_buf(&b, (enum fr_dtype)t, P, H, KV, D);
        att_free(&b);
    }
}

/* Any thread count (each KV head's positions split in up to 6 pieces here), and the team mode, within the
 * same tolerance. */
Test(kernels_attention, thread_counts_and_team_mode) {
    struct test_rng rng = {77};
    enum { P = 1000, H = 4, KV = 2, D = 64 };
    struct att_buf b = att_make(&rng, FR_DTYPE_BF16, P, 7, H, KV, D);
    attention_ref(b.ref, b.q, b.k, b.v, FR_DTYPE_BF16, P, b.stride, H, KV, D, b.scratch);
    for (int nt = 1; nt <= 7; nt += 3) {
        attention(b.out, b.q, b.k, b.v, FR_DTYPE_BF16, P, b.stride, H, KV, D, b.scratch, nt);
        cr_expect(test_close("attention threads", b.out, b.ref, H * D, ATT_ATOL, ATT_RTOL, NULL), "%d", nt);
        for (int i = 0; i < H * D; i++) b.out[i] = NAN;
#pragma omp parallel num_threads(nt)
        attention(b.out, b.q, b.k, b.v, FR_DTYPE_BF16, P, b.stride, H, KV, D, b.scratch, nt);
        cr_expect(test_close("attention team", b.out, b.ref, H * D, ATT_ATOL, ATT_RTOL, NULL), "%d", nt);
    }
    att_free(&b);
}

/* More pieces than threads (the dynamic split: with 2 threads whole heads, then the last two heads in four
 * pieces each; with 3, three pieces a head), Qwen3-0.6B's heads, every ISA, own team and caller's team. */
Test(kernels_attention, many_pieces_every_isa) {
    struct test_rng rng = {78};
    enum { P = 2600, H = 16, KV = 8, D = 128 };
    struct att_buf b = att_make(&rng, FR_DTYPE_BF16, P, 16, H, KV, D);
    attention_ref(b.ref, b.q, b.k, b.v, FR_DTYPE_BF16, P, b.stride, H, KV, D, b.scratch);
    FOR_EACH_ISA(isa) {
        for (int nt = 2; nt <= 3; nt++) {
            for (int i = 0; i < H * D; i++) b.out[i] = NAN;
            attention(b.out, b.q, b.k, b.v, FR_DTYPE_BF16, P, b.stride, H, KV, D, b.scratch, nt);
            cr_expect(test_close("attention pieces", b.out, b.ref, H * D, ATT_ATOL, ATT_RTOL, NULL), "%s %d",
                      kernel_isa_name(isa), nt);
            for (int i = 0; i < H * D; i++) b.out[i] = NAN;
#pragma omp parallel num_threads(nt)
            attention(b.out, b.q, b.k, b.v, FR_DTYPE_BF16, P, b.stride, H, KV, D, b.scratch, nt);
            cr_expect(test_close("attention pieces team", b.out, b.ref, H * D, ATT_ATOL, ATT_RTOL, NULL),
                      "%s %d", kernel_isa_name(isa), nt);
        }
    }
    att_free(&b);
}

/* The last round of heads cut where the team divides the KV heads (kernels.c attn_plan_make), Qwen3-4B's
 * heads (group of 4): with 2 and 4 threads, at positions that cut the tail in four pieces a head (1500),
 * in two (400: the pieces' minimum allows no more) and not at all (300), every ISA, bf16 and f32, the
 * caller's team; scratch holds only n_heads * n_pos floats (ASan sees a slot past it). */
Test(kernels_attention, last_round_of_heads_in_pieces) {
    struct test_rng rng = {80};
    enum { H = 32, KV = 8, D = 128 };
    const int positions[] = {1500, 400, 300};
    for (int t = 0; t < 2; t++)
        for (size_t pi = 0; pi < sizeof positions / sizeof positions[0]; pi++) {
            const int P = positions[pi];
            const enum fr_dtype type = (enum fr_dtype)t;
            struct att_buf b = att_make(&rng, type, P, 5, H, KV, D);
            attention_ref(b.ref, b.q, b.k, b.v, type, P, b.stride, H, KV, D, b.scratch);
            FOR_EACH_ISA(isa) {
                for (int nt = 2; nt <= 4; nt += 2) {
                    for (int i = 0; i < H * D; i++) b.out[i] = NAN;
#pragma omp parallel num_threads(nt)
                    attention(b.out, b.q, b.k, b.v, type, P, b.stride, H, KV, D, b.scratch, nt);
                    cr_expect(test_close("attention tail pieces", b.out, b.ref, (size_t)H * D, ATT_ATOL,
                                         ATT_RTOL, NULL),
                              "%s %s pos %d, %d threads", kernel_isa_name(isa), fr_dtype_name(type), P, nt);
                }
            }
            att_free(&b);
        }
}

/* Below the split's minimum, from two blocks of positions, a caller's team shares whole heads (m, l and the
 * scores on each thread's stack, scratch only n_heads * n_pos floats): the same bits as one thread alone,
 * and close to attention_ref, every ISA, bf16 and f32, groups of 2 and 4, two and three threads. */
Test(kernels_attention, whole_heads_on_a_team_below_the_split) {
    struct test_rng rng = {79};
    const int shapes[][3] = {{16, 8, 128}, {8, 2, 64}}, positions[] = {16, 17, 40, 159};
    for (int t = 0; t < 2; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t pi = 0; pi < sizeof positions / sizeof positions[0]; pi++) {
                const int H = shapes[s][0], KV = shapes[s][1], D = shapes[s][2], P = positions[pi];
                const enum fr_dtype type = (enum fr_dtype)t;
                struct att_buf b = att_make(&rng, type, P, 3, H, KV, D);
                attention_ref(b.dbl, b.q, b.k, b.v, type, P, b.stride, H, KV, D, b.scratch);
                FOR_EACH_ISA(isa) {
                    attention(b.ref, b.q, b.k, b.v, type, P, b.stride, H, KV, D, b.scratch, 1);
                    cr_expect(test_close("attention one thread", b.ref, b.dbl, (size_t)H * D, ATT_ATOL,
                                         ATT_RTOL, NULL),
                              "%s %s %d/%d pos %d", kernel_isa_name(isa), fr_dtype_name(type), H, KV, P);
                    for (int nt = 2; nt <= 3; nt++) {
                        for (int i = 0; i < H * D; i++) b.out[i] = NAN;
#pragma omp parallel num_threads(nt)
                        attention(b.out, b.q, b.k, b.v, type, P, b.stride, H, KV, D, b.scratch, nt);
                        cr_expect(memcmp(b.out, b.ref, sizeof(float) * (size_t)H * D) == 0,
                                  "%s %s %d/%d pos %d, %d threads", kernel_isa_name(isa), fr_dtype_name(type),
                                  H, KV, P, nt);
                    }
                }
                att_free(&b);
            }
}

/* One position: the output is that position's V row exactly (softmax of one score is 1). */
Test(kernels_attention, single_position_copies_v) {
    struct test_rng rng = {5};
    struct att_buf b = att_make(&rng, FR_DTYPE_F32, 1, 2, 4, 2, 64);
    FOR_EACH_ISA(isa) {
        attention(b.out, b.q, b.k, b.v, FR_DTYPE_F32, 1, b.stride, 4, 2, 64, b.scratch, kernel_team_procs());
        for (int h = 0; h < 4; h++)
            cr_expect(memcmp(b.out + h * 64, (float *)b.v + (h / 2) * b.stride, 64 * 4) == 0, "%s head %d",
                      kernel_isa_name(isa), h);
    }
    att_free(&b);
}

/* attention_serial runs on the calling thread alone: called by one thread of a team while the others wait
 * (as roofline/core_speed.c calls it), it matches the reference on every ISA, a cut shape included. */
Test(kernels_attention, serial_on_one_thread_of_a_team) {
    struct test_rng rng = {77};
    const int n_pos = 300, n_heads = 16, n_kv = 8, hd = 128;
    struct att_buf b = att_make(&rng, FR_DTYPE_BF16, n_pos, 3, n_heads, n_kv, hd);
    size_t nq = (size_t)n_heads * hd;
    attention_ref(b.ref, b.q, b.k, b.v, FR_DTYPE_BF16, n_pos, b.stride, n_heads, n_kv, hd, b.scratch);
    FOR_EACH_ISA(isa) {
        for (size_t i = 0; i < nq; i++) b.out[i] = NAN;
#pragma omp parallel num_threads(2)
        {
            if (kernel_team_thread() == kernel_team_size() - 1)
                attention_serial(b.out, b.q, b.k, b.v, FR_DTYPE_BF16, n_pos, b.stride, n_heads, n_kv, hd,
                                 b.scratch);
#pragma omp barrier
        }
        char what[96];
        snprintf(what, sizeof what, "attention_serial %s on one thread of a team", kernel_isa_name(isa));
        cr_expect(test_close(what, b.out, b.ref, nq, ATT_ATOL, ATT_RTOL, NULL), "%s", what);
    }
    att_free(&b);
}
