/* The batched decode step against the single-sequence step: B sequences of a tiny Qwen3-shaped model, each
 * with its own tokens, advanced together for several positions; at every position each sequence's logits
 * must equal those of a single-sequence decode_state fed the same tokens, within the tolerance of
 * tests/test_decode.c (1e-5 absolute + 1e-5 relative: the two differ only in the f32 summation order of the
 * projections). With a bf16 KV cache a value can round to the neighbouring bf16 when the two orders put it
 * on either side of a midpoint, so the stored K and V are checked to be equal or one bf16 step apart, and the
 * single states then take the batch's stored values, as test_decode.c's reference does, so both attentions
 * read the same cache. Also: B = 1 is bit-identical to decode_step, the sampler's per-sequence streams,
 * and the errors. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm_onednn.h"
#include "kernels/team.h"
#include "model/decode_batch.h"
#include "tests/model_fixtures.h"

#define NB_MAX  4
#define N_STEPS 6

static void setup_weights(struct qwen3_weights *w, const struct qwen3_config *c, enum fr_dtype wt) {
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc(w, c, wt, &err), 0, "%s", err.msg);
    qwen3_weights_init_synthetic(w, 4321);
}

/* Stored cache values of one layer and position: equal, or adjacent bf16 values. Returns the mismatches. */
static int kv_compare(const void *a, const void *b, enum fr_dtype t, int n, int *flips) {
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (t == FR_DTYPE_F32) continue; /* f32 caches: the logits' check covers them */
        uint16_t x = ((const uint16_t *)a)[i], y = ((const uint16_t *)b)[i];
        if (x == y) continue;
        (*flips)++;
        if (abs((int)x - (int)y) != 1) bad++;
    }
    return bad;
}

static void check_batch(int batch, enum fr_dtype wt, enum fr_dtype kvt, enum matvec_backend be) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w;
    setup_weights(&w, &c, wt);
    struct decode_batch bt;
    struct decode_state single[NB_MAX];
    struct fr_err err = {{0}};
    /* a blocking small enough that the tiny model's projections are cut into column blocks too */
    const struct gemm_blocking blk = {.l1d_bytes = 1024, .l2_bytes = 4096};
    cr_assert_eq(decode_batch_init(&bt, &w, batch, N_STEPS, kvt, be, kernel_team_procs(), &blk, &err), 0,
                 "%s", err.msg);
    for (int s = 0; s < batch; s++)
        cr_assert_eq(decode_state_init(&single[s], &w, N_STEPS, kvt, be, kernel_team_procs(), &err), 0, "%s",
                     err.msg);
    const double atol = 1e-5, rtol = 1e-5;
    int flips = 0;
    for (int pos = 0; pos < N_STEPS; pos++) {
        int tokens[NB_MAX], positions[NB_MAX];
        for (int s = 0; s < batch; s++) tokens[s] = (7 + 31 * s + 53 * pos) % c.vocab, positions[s] = pos;
        cr_assert_eq(decode_batch_step(&bt, tokens, positions, NULL, &err), 0, "%s", err.msg);
        for (int s = 0; s < batch; s++) {
            cr_assert_eq(decode_step(&single[s], tokens[s], pos, NULL, &err), 0, "%s", err.msg);
            int bad = 0;
            double max_err = 0, max_ref = 0;
            for (int i = 0; i < c.vocab; i++) {
                double got = bt.seq[s].logits[i], ref = single[s].logits[i], d = fabs(got - ref);
                max_err = fmax(max_err, d), max_ref = fmax(max_ref, fabs(ref));
                if (!(d <= atol + rtol * fabs(ref)) && bad++ < 3)
                    cr_log_error("B %d seq %d pos %d logit %d: batched %.7f single %.7f", batch, s, pos, i,
                                 got, ref);
            }
            cr_expect_eq(bad, 0, "B %d seq %d pos %d: %d logits off, max error %.3g", batch, s, pos, bad,
                         max_err);
            cr_expect_gt(max_ref, 0.05, "logits degenerate");
            struct kv_cache *kb = &bt.seq[s].kv, *ks = &single[s].kv;
            for (int l = 0; l < c.n_layers; l++)
                for (int h = 0; h < c.n_kv_heads; h++) {
                    cr_expect_eq(kv_compare(kv_cache_k(kb, l, h, pos), kv_cache_k(ks, l, h, pos), kvt,
                                            c.head_dim, &flips),
                                 0);
                    cr_expect_eq(kv_compare(kv_cache_v(kb, l, h, pos), kv_cache_v(ks, l, h, pos), kvt,
                                            c.head_dim, &flips),
                                 0);
                }
            kv_cache_copy(ks, kb, pos, pos + 1);
        }
        /* distinct tokens give distinct logits: the rows are not one sequence's copied B times */
        if (batch > 1) cr_expect(memcmp(bt.seq[0].logits, bt.seq[1].logits, sizeof(float) * 4) != 0);
    }
    cr_log_info("B %d %s weights %s KV: %d stored K/V values one bf16 step from the single step's", batch,
                fr_dtype_name(wt), fr_dtype_name(kvt), flips);
    for (int s = 0; s < batch; s++) decode_state_free(&single[s]);
    decode_batch_free(&bt);
    qwen3_weights_free(&w);
}

Test(decode_batch, matches_single_bf16_weights_bf16_kv) {
    check_batch(3, FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE);
}

Test(decode_batch, matches_single_bf16_weights_f32_kv) {
    check_batch(4, FR_DTYPE_BF16, FR_DTYPE_F32, MATVEC_BACKEND_FORGE);
}

Test(decode_batch, matches_single_f32_weights_openblas_sgemm) {
    check_batch(2, FR_DTYPE_F32, FR_DTYPE_F32, MATVEC_BACKEND_OPENBLAS);
}

/* The batch sweep's oneDNN rows: its matmul at B = 3 against its own B = 1 steps (f32: X is not rounded). */
Test(decode_batch, matches_single_f32_weights_onednn_matmul) {
    check_batch(3, FR_DTYPE_F32, FR_DTYPE_F32, MATVEC_BACKEND_ONEDNN);
    gemm_onednn_cleanup();
}

Test(decode_batch, one_sequence_is_the_single_step_bit_for_bit) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w;
    setup_weights(&w, &c, FR_DTYPE_BF16);
    struct decode_batch bt;
    struct decode_state st;
    struct fr_err err = {{0}};
    cr_assert_eq(decode_batch_init(&bt, &w, 1, 4, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, kernel_team_procs(),
                                   NULL, &err),
                 0);
    cr_assert_eq(
        decode_state_init(&st, &w, 4, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, kernel_team_procs(), &err), 0);
    for (int pos = 0; pos < 4; pos++) {
        int tok = 11 * pos + 5;
        cr_assert_eq(decode_batch_step(&bt, &tok, &pos, NULL, &err), 0, "%s", err.msg);
        cr_assert_eq(decode_step(&st, tok, pos, NULL, &err), 0, "%s", err.msg);
        cr_expect(memcmp(bt.seq[0].logits, st.logits, sizeof(float) * (size_t)c.vocab) == 0, "pos %d", pos);
    }
    decode_state_free(&st);
    decode_batch_free(&bt);
    qwen3_weights_free(&w);
}

/* Sequence s draws from seed + s: the same token as a single state sampling with that seed. */
Test(decode_batch, sampler_per_sequence_streams) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w;
    setup_weights(&w, &c, FR_DTYPE_F32);
    struct decode_batch bt;
    struct fr_err err = {{0}};
    cr_assert_eq(
        decode_batch_init(&bt, &w, 3, 2, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, kernel_team_procs(), NULL, &err),
        0);
    int tokens[3] = {1, 2, 3}, pos[3] = {0, 0, 0}, out[3];
    cr_assert_eq(decode_batch_step(&bt, tokens, pos, NULL, &err), 0, "%s", err.msg);
    const struct sampler_params p = {.temperature = 1.5f, .top_p = 0.95f, .seed = 99};
    cr_assert_eq(decode_batch_sample(&bt, &p, 7, NULL, out, &err), 0, "%s", err.msg);
    void *scratch = malloc(sampler_scratch_bytes(c.vocab));
    cr_assert_not_null(scratch);
    for (int s = 0; s < 3; s++) {
        struct sampler_params ps = p;
        ps.seed = p.seed + (uint64_t)s;
        int want = -1;
        cr_assert_eq(
            sampler_pick(bt.seq[s].logits, c.vocab, &ps, 7, scratch, kernel_team_procs(), &want, &err), 0);
        cr_expect_eq(out[s], want, "sequence %d", s);
    }
    free(scratch);
    decode_batch_free(&bt);
    qwen3_weights_free(&w);
}

Test(decode_batch, errors) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w;
    setup_weights(&w, &c, FR_DTYPE_BF16);
    struct decode_batch bt;
    struct fr_err err = {{0}};
    /* far more sequences than memory: refused up front, naming the bytes */
    cr_expect_neq(decode_batch_init(&bt, &w, 1 << 30, 64, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE,
                                    kernel_team_procs(), NULL, &err),
                  0);
    cr_expect(strstr(err.msg, "batch 1073741824") != NULL, "%s", err.msg);
    cr_expect_neq(decode_batch_init(&bt, &w, 0, 4, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, kernel_team_procs(),
                                    NULL, &err),
                  0);
    /* bf16 on OpenBLAS with B > 1 needs cblas_sbgemm */
    cr_expect_neq(decode_batch_init(&bt, &w, 2, 4, FR_DTYPE_BF16, MATVEC_BACKEND_OPENBLAS,
                                    kernel_team_procs(), NULL, &err),
                  0);
    cr_expect(strstr(err.msg, "openblas") != NULL, "%s", err.msg);
    cr_assert_eq(decode_batch_init(&bt, &w, 2, 4, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, kernel_team_procs(),
                                   NULL, &err),
                 0);
    int tokens[2] = {1, c.vocab}, pos[2] = {0, 0};
    cr_expect_neq(decode_batch_step(&bt, tokens, pos, NULL, &err), 0);
    cr_expect(strstr(err.msg, "sequence 1") != NULL, "%s", err.msg);
    tokens[1] = 1, pos[0] = 4;
    cr_expect_neq(decode_batch_step(&bt, tokens, pos, NULL, &err), 0);
    cr_expect(strstr(err.msg, "sequence 0") != NULL, "%s", err.msg);
    decode_batch_free(&bt);
    qwen3_weights_free(&w);
}

/* A sweep sets up the largest batch once: the first B sequences of a larger batch step like a batch of B,
 * and rebinding to f32 weights on OpenBLAS keeps the caches. */
Test(decode_batch, active_subset_and_rebind) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w, w32;
    setup_weights(&w, &c, FR_DTYPE_F32);
    setup_weights(&w32, &c, FR_DTYPE_F32);
    struct decode_batch big, small;
    struct fr_err err = {{0}};
    cr_assert_eq(decode_batch_init(&big, &w, 4, 2, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, kernel_team_procs(),
                                   NULL, &err),
                 0);
    cr_assert_eq(decode_batch_init(&small, &w, 2, 2, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, kernel_team_procs(),
                                   NULL, &err),
                 0);
    cr_expect_neq(decode_batch_set_active(&big, 5, &err), 0);
    cr_assert_eq(decode_batch_set_active(&big, 2, &err), 0);
    int tokens[2] = {5, 9}, pos[2] = {0, 0};
    cr_assert_eq(decode_batch_step(&big, tokens, pos, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(decode_batch_step(&small, tokens, pos, NULL, &err), 0, "%s", err.msg);
    for (int s = 0; s < 2; s++)
        cr_expect(memcmp(big.seq[s].logits, small.seq[s].logits, sizeof(float) * (size_t)c.vocab) == 0);
    cr_assert_eq(decode_batch_set_weights(&big, &w32, MATVEC_BACKEND_OPENBLAS, &err), 0, "%s", err.msg);
    pos[0] = pos[1] = 1;
    cr_assert_eq(decode_batch_step(&big, tokens, pos, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(decode_batch_step(&small, tokens, pos, NULL, &err), 0, "%s", err.msg);
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < c.vocab; i++)
            cr_expect(fabsf(big.seq[s].logits[i] - small.seq[s].logits[i]) <=
                      1e-5f + 1e-5f * fabsf(small.seq[s].logits[i]));
    struct qwen3_config other = c;
    other.vocab = c.vocab + 1;
    struct qwen3_weights wo;
    setup_weights(&wo, &other, FR_DTYPE_F32);
    cr_expect_neq(decode_batch_set_weights(&big, &wo, MATVEC_BACKEND_FORGE, &err), 0);
    qwen3_weights_free(&wo);
    decode_batch_free(&big);
    decode_batch_free(&small);
    qwen3_weights_free(&w32);
    qwen3_weights_free(&w);
}
