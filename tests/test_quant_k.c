/* Q4_K, Q5_K and Q6_K (kernels/quant_k.h): the quantisers' round trips through the dequantisers already
 * checked against gguf-py (kernels/quant_dequant.h), the Q4_K scale packing, every ISA's matvec against the
 * exact reference and against the f32 product of the dequantised weights and activations, and the same on
 * the Q5_K rows llama.cpp's llama-quantize wrote (tests/fixtures/gguf/tiny-k-q5_k_m.gguf), whose
 * dequantised values must be gguf-py's bit for bit. */
#include "kernels/quant_k.h"

#include "kernels/quant.h"
#include "kernels/quant_dequant.h"
#include "model/file_map.h"
#include "model/gguf.h"
#include "tests/kernels_test_util.h"

static const enum quant_k_type types[] = {QUANT_K_Q4_K, QUANT_K_Q6_K, QUANT_K_Q5_K};
#define N_TYPES (sizeof types / sizeof types[0])

Test(quant_k, scale_min_packing_round_trips_every_6_bit_pair) {
    for (int j = 0; j < 8; j++)
        for (int v = 0; v < 64; v++) {
            struct quant_block_q4_k b;
            float x[QUANT_QK_K];
            /* a block whose sub-block j alone has range v steps: its packed pair must come back */
            for (int i = 0; i < QUANT_QK_K; i++) x[i] = i / 32 == j ? (float)(i % 2) * (float)v : 0.0f;
            quant_k_quantize_row(&b, QUANT_K_Q4_K, x, QUANT_QK_K);
            int sc, m;
            quant_q4_k_scale_min(b.scales, j, &sc, &m);
            cr_assert_eq(sc, v ? 63 : 0, "sub-block %d range %d: scale %d", j, v, sc);
            cr_assert_eq(m, 0);
        }
}

/* |x - deq| per element within half a code step plus the scales' own quantisation */
Test(quant_k, round_trips_stay_within_the_format_steps) {
    struct test_rng rng = {11};
    const size_t n = 4 * QUANT_QK_K;
    float *x = test_alloc(n * sizeof *x), *back = test_alloc(n * sizeof *back);
    unsigned char *q = test_alloc(quant_k_row_bytes(QUANT_K_Q6_K, n)); /* the largest superblock */
    test_fill(&rng, x, n, -1.0f, 1.0f);
    for (size_t t = 0; t < N_TYPES; t++) {
        quant_k_quantize_row(q, types[t], x, n);
        quant_k_dequantize_row(back, types[t], q, n);
        double rms = 0, worst = 0;
        for (size_t i = 0; i < n; i++) {
            double e = fabs((double)back[i] - x[i]);
            rms += e * e, worst = fmax(worst, e);
        }
        rms = sqrt(rms / (double)n);
        /* Q4_K: a step of about 2/15 (range 2 over 15 codes), half of it at worst plus the scales'
         * rounding; Q5_K: 2/31, the same; Q6_K: 1/32, and up to a whole step where a group's extreme of the
         * other sign meets code 31 (its scale maps the largest magnitude to -32) */
        const double step = types[t] == QUANT_K_Q4_K   ? 2.0 / 15
                            : types[t] == QUANT_K_Q5_K ? 2.0 / 31
                                                       : 1.0 / 32;
        const double bound = types[t] == QUANT_K_Q6_K ? 1.05 : 0.75;
        cr_log_info("%s: worst %.3f, rms %.3f of a step", quant_k_name(types[t]), worst / step, rms / step);
        cr_expect_leq(worst, bound * step, "%s: worst %g, step %g", quant_k_name(types[t]), worst, step);
        cr_expect_leq(rms, 0.35 * step, "%s: rms %g", quant_k_name(types[t]), rms);
        cr_expect_gt(rms, 0.1 * step, "%s: rms %g is too good to be %s", quant_k_name(types[t]), rms,
                     quant_k_name(types[t]));
    }
    free(x), free(back), free(q);
}

/* y = q x on isa against quant_k_dot_ref, and the reference against the dequantised product in double; q in
 * file order, the matvec on a copy in memory order */
static void check_matvec(enum kernel_isa isa, enum quant_k_type t, const unsigned char *q, int rows, int cols,
                         const float *x) {
    float *wd = test_alloc((size_t)cols * sizeof *wd), *y = test_alloc((size_t)rows * sizeof *y);
    const size_t rb = quant_k_row_bytes(t, (size_t)cols);
    const int nb = cols / QUANT_QK_K;
    struct quant_block_q8_k *xq = test_alloc((size_t)nb * sizeof *xq);
    quant_k_quantize_act(xq, x, (size_t)cols);
    cr_assert_eq(kernel_isa_force(isa), 0);
    unsigned char *packed = test_alloc(rb * (size_t)rows);
    memcpy(packed, q, rb * (size_t)rows);
    quant_k_matrix_pack(packed, t, rows, cols);
    cr_assert_eq(quant_k_matvec(y, packed, t, x, rows, cols, 2), 0);
    free(packed);
    for (int r = 0; r < rows; r++) {
        const double ref = quant_k_dot_ref(t, q + rb * (size_t)r, xq, nb);
        /* independently: the dequantised row times the dequantised activations, in double */
        quant_k_dequantize_row(wd, t, q + rb * (size_t)r, (size_t)cols);
        double deq = 0, mag = 0;
        for (int c = 0; c < cols; c++) {
            const double xv = (double)xq[c / QUANT_QK_K].d * xq[c / QUANT_QK_K].qs[c % QUANT_QK_K];
            deq += (double)wd[c] * xv, mag += fabs((double)wd[c] * xv);
        }
        cr_assert_leq(fabs(ref - deq), 1e-6 * mag, "%s %s row %d: reference %.9g, dequantised %.9g",
                      kernel_isa_name(isa), quant_k_name(t), r, ref, deq);
        cr_assert_leq(fabs((double)y[r] - ref), 4e-6 * mag, "%s %s row %d: %.9g, reference %.9g",
                      kernel_isa_name(isa), quant_k_name(t), r, (double)y[r], ref);
    }
    kernel_isa_force(KERNEL_ISA_COUNT);
    free(wd), free(y), free(xq);
}

static void matvec_case(enum kernel_isa isa, enum quant_k_type t, int rows, int cols, uint64_t seed) {
    struct test_rng rng = {seed};
    float *w = test_alloc((size_t)rows * (size_t)cols * sizeof *w), *x = test_alloc((size_t)cols * sizeof *x);
    const size_t rb = quant_k_row_bytes(t, (size_t)cols);
    unsigned char *q = test_alloc(rb * (size_t)rows);
    test_fill(&rng, w, (size_t)rows * (size_t)cols, -1.0f, 1.0f);
    test_fill(&rng, x, (size_t)cols, -2.0f, 2.0f);
    for (int r = 0; r < rows; r++)
        quant_k_quantize_row(q + rb * (size_t)r, t, w + (size_t)r * cols, (size_t)cols);
    check_matvec(isa, t, q, rows, cols, x);
    free(w), free(x), free(q);
}

static const enum kernel_isa isas[] = {KERNEL_ISA_SCALAR, KERNEL_ISA_AVX2, KERNEL_ISA_AVX512};

Test(quant_k, every_isa_matches_the_reference_and_the_dequantised_product) {
    int ran = 0;
    for (size_t i = 0; i < 3; i++) {
        if (isas[i] > kernel_isa_best()) continue;
        for (size_t t = 0; t < N_TYPES; t++) {
            matvec_case(isas[i], types[t], 37, 1024, 5 + i);
            matvec_case(isas[i], types[t], 3, 3072, 9 + i);
            matvec_case(isas[i], types[t], 1, 256, 13 + i);
            matvec_case(isas[i], types[t], 16, 512, 17 + i); /* two groups, no tail */
        }
        ran++;
    }
    cr_expect_geq(ran, 1);
}

/* Q8_K as written out here, apart from the kernels: d = max|x| / 127, codes rounded half to even, sums */
static void act_expected(struct quant_block_q8_k *q, const float *x) {
    float amax = 0;
    for (int i = 0; i < QUANT_QK_K; i++) amax = fmaxf(amax, fabsf(x[i]));
    const float inv = amax > 0 ? 127.0f / amax : 0.0f;
    q->d = amax / 127.0f;
    for (int g = 0; g < QUANT_QK_K / 16; g++) {
        int sum = 0;
        for (int l = 0; l < 16; l++) {
            const float v = x[16 * g + l] * inv, r = nearbyintf(v);
            q->qs[16 * g + l] = (int8_t)r;
            sum += (int)r;
        }
        q->bsums[g] = (int16_t)sum;
    }
}

/* Every ISA's activation quantiser gives the same bytes: random rows, an all-zero superblock, a lone value,
 * ties at k + 0.5 (max|x| 127: the scale is 1, so halves must round to even), tiny and huge magnitudes */
Test(quant_k, every_isa_quantises_activations_alike) {
    enum { NB = 7 };
    struct test_rng rng = {77};
    float *x = test_alloc(NB * QUANT_QK_K * sizeof *x);
    test_fill(&rng, x, NB * QUANT_QK_K, -2.0f, 2.0f);
    memset(x + QUANT_QK_K, 0, QUANT_QK_K * sizeof *x);
    memset(x + 2 * QUANT_QK_K, 0, QUANT_QK_K * sizeof *x);
    x[2 * QUANT_QK_K + 100] = -3.5f;
    for (int i = 0; i < QUANT_QK_K; i++)
        x[3 * QUANT_QK_K + i] = (float)(i % 254 - 127) + (i % 3 ? 0.5f : 0.0f);
    x[3 * QUANT_QK_K + 7] = 127.0f;
    for (int i = 0; i < QUANT_QK_K; i++) x[4 * QUANT_QK_K + i] *= 1e-30f, x[5 * QUANT_QK_K + i] *= 1e30f;
    struct quant_block_q8_k want[NB], got[NB];
    for (int b = 0; b < NB; b++) act_expected(&want[b], x + b * QUANT_QK_K);
    int ran = 0;
    for (size_t i = 0; i < 3; i++) {
        if (isas[i] > kernel_isa_best()) continue;
        cr_assert_eq(kernel_isa_force(isas[i]), 0);
        memset(got, 0x5a, sizeof got);
        quant_k_quantize_act(got, x, NB * QUANT_QK_K);
        kernel_isa_force(KERNEL_ISA_COUNT);
        for (int b = 0; b < NB; b++) {
            cr_expect_eq(got[b].d, want[b].d, "%s superblock %d: d %g, want %g", kernel_isa_name(isas[i]), b,
                         (double)got[b].d, (double)want[b].d);
            cr_expect_arr_eq(got[b].qs, want[b].qs, sizeof want[b].qs, "%s superblock %d: codes differ",
                             kernel_isa_name(isas[i]), b);
            cr_expect_arr_eq(got[b].bsums, want[b].bsums, sizeof want[b].bsums,
                             "%s superblock %d: sums differ", kernel_isa_name(isas[i]), b);
        }
        ran++;
    }
    cr_expect_geq(ran, 1);
    free(x);
}

Test(quant_k, refuses_columns_off_a_superblock) {
    float x[300] = {0}, y[1];
    unsigned char w[210 * 2] = {0};
    cr_expect_eq(quant_k_matvec(y, w, QUANT_K_Q6_K, x, 1, 300, 1), -1);
    cr_expect_eq(quant_k_matvec(y, w, QUANT_K_Q6_K, x, 1, 0, 1), -1);
}

static void map_gguf(const char *path, struct file_map *m, struct gguf_file *g) {
    struct fr_err err = {{0}};
    cr_assert_eq(file_map_open(path, 4, m, &err), 0, "%s (run from the repository root)", err.msg);
    cr_assert_eq(gguf_parse(m->data, m->len, path, g, &err), 0, "%s", err.msg);
}

/* llama-quantize's Q5_K matrices: dequantised to gguf-py's f32 values bit for bit, and every ISA's matvec
 * on them against the reference and the dequantised product (our quantiser's codes are not llama.cpp's) */
/* The memory order (quant_k_matrix_pack): every row read back in file order, every value read back, the
 * bytes given back by unpack; Q4_K's and Q6_K's groups moved (a pack that did nothing would pass the
 * rest), Q5_K's and the tails' rows not. */
Test(quant_k, pack_reads_back_every_row_and_unpacks) {
    enum { R = 21, C = 512 }; /* two groups and 5 rows after them */
    for (size_t t = 0; t < N_TYPES; t++) {
        struct test_rng rng = {31 + t};
        const size_t rb = quant_k_row_bytes(types[t], C);
        float *w = test_alloc((size_t)R * C * sizeof *w), *v = test_alloc(C * sizeof *v),
              *v_ref = test_alloc(C * sizeof *v_ref);
        unsigned char *file = test_alloc(rb * R), *mem = test_alloc(rb * R), *row = test_alloc(rb);
        test_fill(&rng, w, (size_t)R * C, -1.0f, 1.0f);
        for (int r = 0; r < R; r++)
            quant_k_quantize_row(file + rb * (size_t)r, types[t], w + (size_t)r * C, C);
        memcpy(mem, file, rb * R);
        quant_k_matrix_pack(mem, types[t], R, C);
        const int grouped = quant_k_grouped_rows(types[t], R);
        cr_expect_eq(grouped, types[t] == QUANT_K_Q5_K ? 0 : 16, "%s", quant_k_name(types[t]));
        cr_expect_eq(memcmp(mem, file, rb * (size_t)grouped) != 0, grouped > 0, "%s: groups moved",
                     quant_k_name(types[t]));
        cr_expect_eq(
            memcmp(mem + rb * (size_t)grouped, file + rb * (size_t)grouped, rb * (size_t)(R - grouped)), 0,
            "%s: the tail stays in file order", quant_k_name(types[t]));
        for (int r = 0; r < R; r++) {
            quant_k_matrix_row(row, types[t], mem, R, C, r);
            cr_expect_eq(memcmp(row, file + rb * (size_t)r, rb), 0, "%s row %d", quant_k_name(types[t]), r);
            quant_k_matrix_dequantize_row(v, types[t], mem, R, C, r);
            quant_k_dequantize_row(v_ref, types[t], file + rb * (size_t)r, C);
            cr_expect_eq(memcmp(v, v_ref, C * sizeof *v), 0, "%s row %d values", quant_k_name(types[t]), r);
        }
        quant_k_matrix_unpack(mem, types[t], R, C);
        cr_expect_eq(memcmp(mem, file, rb * R), 0, "%s: unpack gives the file back", quant_k_name(types[t]));
        free(w), free(v), free(v_ref), free(file), free(mem), free(row);
    }
}

Test(quant_k, llama_quantize_q5_k_rows_match_gguf_py_on_every_isa) {
    struct file_map qm, rm;
    struct gguf_file qg, rg;
    map_gguf("tests/fixtures/gguf/tiny-k-q5_k_m.gguf", &qm, &qg);
    map_gguf("tests/fixtures/gguf/tiny-k-q5_k_m-ref.gguf", &rm, &rg);
    int seen = 0;
    for (uint64_t i = 0; i < qg.n_tensors; i++) {
        const struct gguf_tensor *t = &qg.tensors[i];
        if (t->type != GGUF_GGML_Q5_K) continue;
        char name[72];
        cr_assert_lt(t->name_len, sizeof name);
        memcpy(name, t->name, t->name_len), name[t->name_len] = '\0';
        const struct gguf_tensor *rt = gguf_find_tensor(&rg, name);
        cr_assert(rt && rt->type == GGUF_GGML_F32 && t->ndim == 2, "%s: no f32 reference", name);
        const int cols = (int)t->dims[0], rows = (int)t->dims[1];
        const size_t n = (size_t)rows * (size_t)cols;
        const unsigned char *src = qg.buf + qg.data_off + t->offset;
        float *got = test_alloc(n * sizeof *got), *x = test_alloc((size_t)cols * sizeof *x);
        quant_k_dequantize_row(got, QUANT_K_Q5_K, src, n);
        cr_expect_eq(memcmp(got, rg.buf + rg.data_off + rt->offset, n * sizeof *got), 0,
                     "%s: not gguf-py's values", name);
        struct test_rng rng = {seen + 1u};
        test_fill(&rng, x, (size_t)cols, -2.0f, 2.0f);
        for (size_t k = 0; k < 3; k++)
            if (isas[k] <= kernel_isa_best()) check_matvec(isas[k], QUANT_K_Q5_K, src, rows, cols, x);
        free(got), free(x);
        seen++;
    }
    cr_expect_gt(seen, 0, "the Q5_K_M fixture holds no Q5_K matrix");
    gguf_free(&qg), gguf_free(&rg);
    file_map_close(&qm), file_map_close(&rm);
}
