/* Per-tensor weight formats (model/weight_formats.h). */
#include "model/weight_formats.h"

#include <stdio.h>
#include <string.h>

const char *wpart_name(enum wpart p) {
    static const char *const names[] = {"attn_q",   "attn_k", "attn_v",  "attn_output",
                                        "ffn_gate", "ffn_up", "ffn_down"};
    return (unsigned)p < WPART_COUNT ? names[p] : "?";
}

void weight_formats_uniform(struct weight_formats *f, int n_layers, enum fr_dtype t) {
    memset(f, 0, sizeof *f);
    f->embed = f->lm_head = t;
    f->n_layers = n_layers < 0 ? 0 : n_layers > WFMT_MAX_LAYERS ? WFMT_MAX_LAYERS : n_layers;
    for (int l = 0; l < f->n_layers; l++)
        for (int p = 0; p < WPART_COUNT; p++) f->layer[l][p] = t;
}

int weight_formats_count(const struct weight_formats *f, enum fr_dtype t) {
    int n = (f->embed == t) + (f->lm_head == t && f->lm_head != f->embed);
    for (int l = 0; l < f->n_layers; l++)
        for (int p = 0; p < WPART_COUNT; p++) n += f->layer[l][p] == t;
    return n;
}

bool weight_formats_is_uniform(const struct weight_formats *f, enum fr_dtype *t) {
    int best = -1, best_n = -1;
    for (int d = 0; d < FR_DTYPE_COUNT; d++) {
        int n = 0;
        for (int l = 0; l < f->n_layers; l++)
            for (int p = 0; p < WPART_COUNT; p++) n += f->layer[l][p] == (enum fr_dtype)d;
        if (n > best_n) best = d, best_n = n;
    }
    if (t) *t = f->n_layers > 0 ? (enum fr_dtype)best : f->embed;
    return f->embed == f->lm_head &&
           (f->n_layers == 0 || (best_n == f->n_layers * WPART_COUNT && f->embed == (enum fr_dtype)best));
}

void weight_formats_describe(const struct weight_formats *f, char *buf, size_t len) {
    size_t at = 0;
    if (len) buf[0] = '\0';
    for (int d = 0; d < FR_DTYPE_COUNT; d++) {
        int n = weight_formats_count(f, (enum fr_dtype)d);
        if (n == 0 || at >= len) continue;
        int k = snprintf(buf + at, len - at, "%s%s %d", at ? ", " : "", fr_dtype_name((enum fr_dtype)d), n);
        at += k > 0 ? (size_t)k : 0;
    }
}
