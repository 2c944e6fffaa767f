/* The sampler sweep's "model" rows (the full run with --weights): every variant but the sort-based ones is
 * timed on the given logits row at its own vocabulary, after the generated rows, each with the nucleus that
 * row gives (checked here against the reference filter run directly). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sampler_bench.h"
#include "kernels/sampler.h"
#include "kernels/sampler_topp.h"

Test(sampler_bench, model_rows_time_the_given_logits) {
    enum { V = 3000 };
    static float logits[V], probs[V];
    for (int i = 0; i < V; i++) logits[i] = (float)(i % 97) * 0.05f - (float)(i % 13) * 0.3f;
    struct sampler_bench_opts o;
    sampler_bench_default_opts(&o);
    static const int vocabs[] = {1024};
    o.vocabs = vocabs, o.n_vocabs = 1, o.skip_sort = true, o.min_time_s = 0.001, o.min_reps = 3;
    o.model_logits = logits, o.model_vocab = V;
    struct sampler_bench_result *res = NULL;
    int n = 0;
    struct fr_err err = {{0}};
    cr_assert_eq(sampler_bench_run(&o, &res, &n, &err), 0, "%s", err.msg);
    void *scratch = malloc(sampler_scratch_bytes(V));
    cr_assert_eq(sampler_softmax(probs, logits, FR_DTYPE_F32, V, o.temperature, 1, &err), 0);
    int want_nucleus = sampler_top_p_ref(probs, V, o.top_p, scratch);
    int model_rows = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(res[i].row_kind, "model") != 0) {
            cr_expect_eq(res[i].vocab, 1024);
            continue;
        }
        model_rows++;
        cr_expect_eq(res[i].vocab, V);
        cr_expect(res[i].nucleus == -1 || res[i].nucleus == want_nucleus, "%s: nucleus %d, the row's is %d",
                  res[i].variant, res[i].nucleus, want_nucleus);
        cr_expect(isfinite(res[i].timing.median_s) && res[i].timing.median_s > 0);
    }
    cr_expect_eq(model_rows, SAMPLER_BENCH_VARIANT_COUNT - 2, "every variant but the two sort-based ones");
    free(scratch);
    free(res);
}
