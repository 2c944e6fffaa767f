/* Qwen3's byte-level BPE tokenizer. The pipeline is Hugging Face's for Qwen3's tokenizer.json: added tokens
 * are cut out of the text first (leftmost, longest), each piece between them is NFC-normalized (utf8proc),
 * split by Qwen2's pre-tokenizer regex (written out below as a hand matcher, as llama.cpp does, since C has
 * no Unicode regex), and each split's UTF-8 bytes are merged by rank. The vocabulary is kept as raw bytes:
 * GPT-2's byte-to-character table is undone once, when loading. Checked in tests/test_tokenizer.c against
 * @huggingface/tokenizers on the real Qwen3 vocabulary (a 500-string corpus) and on the tiny fixture's. */
#include "model/tokenizer.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "model/file_map.h"

#define TOK_JSON_MAX_BYTES (256u << 20)

/* GPT-2's table: printable Latin-1 bytes stand for themselves, the other 68 map to U+0100.. in byte order. */
static int byte_to_cp[256];
static int cp_to_byte[512]; /* -1: not in the alphabet */

static void byte_table_init(void) {
    static bool done;
    if (done) return;
    for (int i = 0; i < 512; i++) cp_to_byte[i] = -1;
    int extra = 0;
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
        byte_to_cp[b] = printable ? b : 256 + extra++;
        cp_to_byte[byte_to_cp[b]] = b;
    }
    done = true;
}

static uint64_t hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

static uint64_t hash_pair(int32_t a, int32_t b) {
    uint64_t z = ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) * 0x9e3779b97f4a7c15ull;
    return z ^ (z >> 29);
}

/* ---- building ---- */

struct builder {
    struct tokenizer *t;
    size_t arena_cap, arena_len;
    struct fr_err *err;
};

static int tok_alloc(struct builder *b, int n_vocab) {
    struct tokenizer *t = b->t;
    t->n_vocab = n_vocab;
    t->eos_id = -1;
    t->pieces = calloc((size_t)n_vocab, sizeof *t->pieces);
    t->added = calloc((size_t)n_vocab, 1);
    t->map_cap = 1;
    while (t->map_cap < 2u * (uint32_t)n_vocab) t->map_cap <<= 1;
    t->map = malloc(sizeof *t->map * t->map_cap);
    t->added_ids = malloc(sizeof *t->added_ids * (size_t)n_vocab);
    if (!t->pieces || !t->added || !t->map || !t->added_ids)
        return fr_err_set(b->err, "%s: out of memory for %d tokens", t->source, n_vocab);
    memset(t->map, 0xff, sizeof *t->map * t->map_cap);
    for (int i = 0; i < 256; i++) t->byte_id[i] = -1;
    return 0;
}

static int arena_put(struct builder *b, const unsigned char *s, size_t n, struct tok_piece *p) {
    if (b->arena_len + n > b->arena_cap) {
        size_t cap = b->arena_cap ? b->arena_cap : 1u << 20;
        while (cap < b->arena_len + n) cap *= 2;
        unsigned char *a = realloc(b->t->arena, cap);
        if (!a) return fr_err_set(b->err, "%s: out of memory for the token pieces", b->t->source);
        b->t->arena = a, b->arena_cap = cap;
    }
    memcpy(b->t->arena + b->arena_len, s, n);
    p->off = (uint32_t)b->arena_len;
    p->len = (uint32_t)n;
    b->arena_len += n;
    return 0;
}

static int map_find(const struct tokenizer *t, const unsigned char *s, size_t n) {
    for (uint32_t h = (uint32_t)hash_bytes(s, n) & (t->map_cap - 1);; h = (h + 1) & (t->map_cap - 1)) {
        int32_t id = t->map[h];
        if (id < 0) return -1;
        const struct tok_piece *p = &t->pieces[id];
        if (p->len == n && memcmp(t->arena + p->off, s, n) == 0) return id;
    }
}

static bool valid_utf8(const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t l =
            utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (l <= 0) return false;
        i += (size_t)l;
    }
    return true;
}

/* Undoes the byte-to-character table: the piece's bytes into out (at most n bytes); -1 with err set when the
 * text is not UTF-8 or holds a character outside the alphabet. */
static int piece_bytes(struct builder *b, int id, const char *s, size_t n, unsigned char *out,
                       size_t *out_n) {
    char buf[48];
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t l =
            utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (l <= 0)
            return fr_err_set(b->err, "%s: token %d ('%s') is not valid UTF-8 at byte %zu", b->t->source, id,
                              fr_err_printable(s, n, buf, sizeof buf), i);
        if (cp >= 512 || cp_to_byte[cp] < 0)
            return fr_err_set(b->err, "%s: token %d ('%s') holds U+%04X, outside the byte-level alphabet",
                              b->t->source, id, fr_err_printable(s, n, buf, sizeof buf), (unsigned)cp);
        out[k++] = (unsigned char)cp_to_byte[cp];
        i += (size_t)l;
    }
    *out_n = k;
    return 0;
}

/* Sets token id: a normal piece (byte-level text) or an added token's verbatim text. */
static int tok_set(struct builder *b, int id, const char *s, size_t n, bool added) {
    struct tokenizer *t = b->t;
    char buf[48];
    if (id < 0 || id >= t->n_vocab)
        return fr_err_set(b->err, "%s: token id %d outside [0, %d)", t->source, id, t->n_vocab);
    if (t->pieces[id].len || t->added[id])
        return fr_err_set(b->err, "%s: token id %d is given twice", t->source, id);
    if (n == 0) return fr_err_set(b->err, "%s: token %d is empty", t->source, id);
    if (added) {
        if (!valid_utf8(s, n))
            return fr_err_set(b->err, "%s: added token %d ('%s') is not valid UTF-8", t->source, id,
                              fr_err_printable(s, n, buf, sizeof buf));
        t->added[id] = 1;
        t->added_ids[t->n_added++] = id;
        return arena_put(b, (const unsigned char *)s, n, &t->pieces[id]);
    }
    unsigned char *raw = malloc(n);
    size_t raw_n = 0;
    if (!raw) return fr_err_set(b->err, "%s: out of memory", t->source);
    int rc = piece_bytes(b, id, s, n, raw, &raw_n);
    int other = rc == 0 ? map_find(t, raw, raw_n) : -1;
    if (rc == 0 && other >= 0)
        rc = fr_err_set(b->err, "%s: token %d ('%s') repeats token %d", t->source, id,
                        fr_err_printable(s, n, buf, sizeof buf), other);
    if (rc == 0) rc = arena_put(b, raw, raw_n, &t->pieces[id]);
    free(raw);
    if (rc) return rc;
    uint32_t h = (uint32_t)hash_bytes(t->arena + t->pieces[id].off, raw_n) & (t->map_cap - 1);
    while (t->map[h] >= 0) h = (h + 1) & (t->map_cap - 1);
    t->map[h] = id;
    if (raw_n == 1) t->byte_id[t->arena[t->pieces[id].off]] = id;
    return 0;
}

static int merges_alloc(struct builder *b, size_t n) {
    struct tokenizer *t = b->t;
    t->merge_cap = 1;
    while (t->merge_cap < 2 * n + 2) t->merge_cap <<= 1;
    t->merges = malloc(sizeof *t->merges * t->merge_cap);
    if (!t->merges) return fr_err_set(b->err, "%s: out of memory for %zu merges", t->source, n);
    for (uint32_t i = 0; i < t->merge_cap; i++) t->merges[i].a = -1;
    return 0;
}

static const struct tok_merge *merge_find(const struct tokenizer *t, int32_t a, int32_t b) {
    for (uint32_t h = (uint32_t)hash_pair(a, b) & (t->merge_cap - 1);; h = (h + 1) & (t->merge_cap - 1)) {
        const struct tok_merge *m = &t->merges[h];
        if (m->a < 0) return NULL;
        if (m->a == a && m->b == b) return m;
    }
}

/* Merge `rank`: parts a and b in byte-level text. Both and their concatenation must be tokens. */
static int merge_add(struct builder *b, int rank, const char *a, size_t an, const char *bs, size_t bn) {
    struct tokenizer *t = b->t;
    char buf[48], buf2[48];
    unsigned char *raw = malloc(an + bn + 1);
    if (!raw) return fr_err_set(b->err, "%s: out of memory", t->source);
    size_t ra = 0, rb = 0;
    int rc = piece_bytes(b, -1, a, an, raw, &ra) || piece_bytes(b, -1, bs, bn, raw + ra, &rb) ? -1 : 0;
    if (rc) {
        char keep[sizeof b->err->msg];
        snprintf(keep, sizeof keep, "%s", b->err->msg);
        fr_err_set(b->err, "merge %d: %s", rank, keep);
        free(raw);
        return -1;
    }
    int ia = map_find(t, raw, ra), ib = map_find(t, raw + ra, rb), im = map_find(t, raw, ra + rb);
    free(raw);
    if (ia < 0 || ib < 0 || im < 0)
        return fr_err_set(b->err, "%s: merge %d ('%s %s'): %s is not in the vocabulary", t->source, rank,
                          fr_err_printable(a, an, buf, sizeof buf),
                          fr_err_printable(bs, bn, buf2, sizeof buf2),
                          ia < 0   ? "its first part"
                          : ib < 0 ? "its second part"
                                   : "the merged token");
    uint32_t h = (uint32_t)hash_pair(ia, ib) & (t->merge_cap - 1);
    while (t->merges[h].a >= 0) {
        if (t->merges[h].a == ia && t->merges[h].b == ib)
            return 0; /* a repeated merge keeps its first rank */
        h = (h + 1) & (t->merge_cap - 1);
    }
    t->merges[h] = (struct tok_merge){ia, ib, rank, im};
    t->n_merges++;
    return 0;
}

static int tok_finish(struct builder *b) {
    for (int i = 0; i < 256; i++)
        if (b->t->byte_id[i] < 0)
            return fr_err_set(b->err, "%s: no token for the byte 0x%02x: byte-level BPE needs all 256",
                              b->t->source, i);
    return 0;
}

/* ---- loading ---- */

static int from_gguf(struct tokenizer *t, const struct gguf_file *g, struct fr_err *err) {
    struct builder b = {t, 0, 0, err};
    const char *model;
    size_t model_n;
    if (gguf_get_string(g, "tokenizer.ggml.model", &model, &model_n, err)) return -1;
    if (model_n != 4 || memcmp(model, "gpt2", 4) != 0) {
        char buf[32];
        return fr_err_set(err, "%s: metadata 'tokenizer.ggml.model' is '%s', not 'gpt2' (byte-level BPE)",
                          g->path, fr_err_printable(model, model_n, buf, sizeof buf));
    }
    const struct gguf_kv *tokens = gguf_get_array(g, "tokenizer.ggml.tokens", GGUF_VTYPE_STRING, err);
    const struct gguf_kv *merges =
        tokens ? gguf_get_array(g, "tokenizer.ggml.merges", GGUF_VTYPE_STRING, err) : NULL;
    if (!tokens || !merges) return -1;
    if (tokens->n < 256 || tokens->n > INT_MAX / 2)
        return fr_err_set(err, "%s: 'tokenizer.ggml.tokens' holds %llu tokens", g->path,
                          (unsigned long long)tokens->n);
    const struct gguf_kv *types = gguf_find_kv(g, "tokenizer.ggml.token_type");
    if (types &&
        (!gguf_get_array(g, "tokenizer.ggml.token_type", GGUF_VTYPE_INT32, err) || types->n != tokens->n))
        return types->n != tokens->n
                   ? fr_err_set(err, "%s: 'tokenizer.ggml.token_type' has %llu entries for %llu tokens",
                                g->path, (unsigned long long)types->n, (unsigned long long)tokens->n)
                   : -1;
    if (tok_alloc(&b, (int)tokens->n)) return -1;
    size_t off = tokens->value_off;
    for (int i = 0; i < t->n_vocab; i++) {
        const char *s;
        size_t n;
        gguf_next_string(g, &off, &s, &n);
        /* llama.cpp's types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte */
        int64_t type = types ? gguf_array_int(g, types, (uint64_t)i) : 1;
        if (type == 5) continue; /* padding rows ([PAD151669]): no text, never produced */
        if (tok_set(&b, i, s, n, type == 3 || type == 4)) return -1;
    }
    if (merges_alloc(&b, (size_t)merges->n)) return -1;
    off = merges->value_off;
    for (uint64_t r = 0; r < merges->n; r++) {
        const char *s;
        size_t n;
        gguf_next_string(g, &off, &s, &n);
        const char *sp = memchr(s, ' ', n);
        char buf[48];
        if (!sp || sp == s || sp + 1 == s + n)
            return fr_err_set(err, "%s: merge %llu ('%s') is not two pieces separated by a space", g->path,
                              (unsigned long long)r, fr_err_printable(s, n, buf, sizeof buf));
        if (merge_add(&b, (int)r, s, (size_t)(sp - s), sp + 1, n - (size_t)(sp - s) - 1)) return -1;
    }
    uint64_t eos;
    if (gguf_find_kv(g, "tokenizer.ggml.eos_token_id") &&
        gguf_get_uint(g, "tokenizer.ggml.eos_token_id", &eos, err) == 0 && eos < (uint64_t)t->n_vocab)
        t->eos_id = (int)eos;
    return tok_finish(&b);
}

int tokenizer_from_gguf(struct tokenizer *t, const struct gguf_file *g, struct fr_err *err) {
    memset(t, 0, sizeof *t);
    byte_table_init();
    snprintf(t->source, sizeof t->source, "%s", g->path);
    int rc = from_gguf(t, g, err);
    if (rc) tokenizer_free(t);
    return rc;
}

static char *read_file(const char *path, size_t *len, struct fr_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fr_err_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n == cap) {
            cap = cap ? 2 * cap : 1u << 20;
            char *nb = cap > TOK_JSON_MAX_BYTES ? NULL : realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                fr_err_set(err, "%s: larger than %u MB or out of memory", path, TOK_JSON_MAX_BYTES >> 20);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fr_err_set(err, "%s: read error", path);
        return NULL;
    }
    *len = n;
    return buf;
}

/* Qwen2's pre-tokenizer pattern, as Qwen3's tokenizer.json spells it: the only one the matcher implements. */
static const char qwen2_pattern[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
                                    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

static int check_pretokenizer(const cJSON *root, const char *path, struct fr_err *err) {
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(pre, "pretokenizers");
    const cJSON *p;
    cJSON_ArrayForEach(p, list) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "type");
        const cJSON *re =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "pattern"), "Regex");
        if (cJSON_IsString(type) && strcmp(type->valuestring, "Split") == 0 &&
            (!cJSON_IsString(re) || strcmp(re->valuestring, qwen2_pattern) != 0))
            return fr_err_set(
                err, "%s: pre_tokenizer's Split pattern is not Qwen2's (the only one implemented)", path);
    }
    return 0;
}

static int from_json_root(struct builder *b, const cJSON *root, const char *path) {
    struct fr_err *err = b->err;
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(model, "type");
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "BPE") != 0)
        return fr_err_set(err, "%s: 'model.type' must be \"BPE\"", path);
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
    if (!cJSON_IsObject(vocab)) return fr_err_set(err, "%s: missing 'model.vocab'", path);
    if (!cJSON_IsArray(merges)) return fr_err_set(err, "%s: missing 'model.merges'", path);
    if (added && !cJSON_IsArray(added)) return fr_err_set(err, "%s: 'added_tokens' is not an array", path);
    if (check_pretokenizer(root, path, err)) return -1;
    double most = -1;
    const cJSON *e;
    cJSON_ArrayForEach(e, vocab) {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > (1 << 24) ||
            e->valuedouble != (int)e->valuedouble)
            return fr_err_set(err, "%s: 'model.vocab' entry has an id that is not an integer in [0, 2^24]",
                              path);
        if (e->valuedouble > most) most = e->valuedouble;
    }
    cJSON_ArrayForEach(e, added) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble > (1 << 24) ||
            id->valuedouble != (int)id->valuedouble)
            return fr_err_set(err, "%s: an 'added_tokens' entry has no integer 'id' in [0, 2^24]", path);
        if (id->valuedouble > most) most = id->valuedouble;
    }
    if (most < 255)
        return fr_err_set(err, "%s: a vocabulary of %d tokens cannot hold the 256 bytes", path,
                          (int)most + 1);
    if (tok_alloc(b, (int)most + 1)) return -1;
    cJSON_ArrayForEach(e, vocab) {
        if (tok_set(b, (int)e->valuedouble, e->string, strlen(e->string), false)) return -1;
    }
    cJSON_ArrayForEach(e, added) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id"),
                    *content = cJSON_GetObjectItemCaseSensitive(e, "content");
        if (!cJSON_IsString(content))
            return fr_err_set(err, "%s: added token %d has no 'content'", path, (int)id->valuedouble);
        /* an added token may repeat a vocabulary entry's id with the same text: it is matched verbatim */
        struct tok_piece *p = &b->t->pieces[(int)id->valuedouble];
        if (p->len && !b->t->added[(int)id->valuedouble]) p->len = 0;
        if (tok_set(b, (int)id->valuedouble, content->valuestring, strlen(content->valuestring), true))
            return -1;
        if (strcmp(content->valuestring, "<|endoftext|>") == 0) b->t->eos_id = (int)id->valuedouble;
    }
    if (merges_alloc(b, (size_t)cJSON_GetArraySize(merges))) return -1;
    int r = 0;
    cJSON_ArrayForEach(e, merges) {
        const char *s1, *s2;
        size_t n1, n2;
        if (cJSON_IsString(e)) {
            const char *sp = strchr(e->valuestring, ' ');
            if (!sp || sp == e->valuestring || !sp[1])
                return fr_err_set(err, "%s: merge %d is not two pieces separated by a space", path, r);
            s1 = e->valuestring, n1 = (size_t)(sp - s1), s2 = sp + 1, n2 = strlen(s2);
        } else if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 &&
                   cJSON_IsString(cJSON_GetArrayItem(e, 0)) && cJSON_IsString(cJSON_GetArrayItem(e, 1))) {
            s1 = cJSON_GetArrayItem(e, 0)->valuestring, n1 = strlen(s1);
            s2 = cJSON_GetArrayItem(e, 1)->valuestring, n2 = strlen(s2);
        } else {
            return fr_err_set(err, "%s: merge %d is neither \"a b\" nor [\"a\", \"b\"]", path, r);
        }
        if (merge_add(b, r++, s1, n1, s2, n2)) return -1;
    }
    return tok_finish(b);
}

int tokenizer_from_json(struct tokenizer *t, const char *path, struct fr_err *err) {
    memset(t, 0, sizeof *t);
    byte_table_init();
    snprintf(t->source, sizeof t->source, "%s", path);
    size_t len;
    char *text = read_file(path, &len, err);
    if (!text) return -1;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!root) return fr_err_set(err, "%s: not valid JSON", path);
    struct builder b = {t, 0, 0, err};
    int rc = from_json_root(&b, root, path);
    cJSON_Delete(root);
    if (rc) tokenizer_free(t);
    return rc;
}

void tokenizer_free(struct tokenizer *t) {
    free(t->arena);
    free(t->pieces);
    free(t->added);
    free(t->map);
    free(t->merges);
    free(t->added_ids);
    memset(t, 0, sizeof *t);
}

/* ---- encoding ---- */

struct ids {
    int *v;
    int n, cap;
};

static int ids_push(struct ids *o, int id) {
    if (o->n == o->cap) {
        int cap = o->cap ? 2 * o->cap : 64;
        int *v = realloc(o->v, sizeof *v * (size_t)cap);
        if (!v) return -1;
        o->v = v, o->cap = cap;
    }
    o->v[o->n++] = id;
    return 0;
}

static bool is_letter(int32_t c) {
    utf8proc_category_t k = utf8proc_category(c);
    return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO;
}

static bool is_number(int32_t c) {
    utf8proc_category_t k = utf8proc_category(c);
    return k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO;
}

/* Unicode's White_Space property (what \s matches in Oniguruma, which Hugging Face's tokenizers uses). */
static bool is_space(int32_t c) {
    if ((c >= 9 && c <= 13) || c == 0x20 || c == 0x85) return true;
    utf8proc_category_t k = utf8proc_category(c);
    return k == UTF8PROC_CATEGORY_ZS || k == UTF8PROC_CATEGORY_ZL || k == UTF8PROC_CATEGORY_ZP;
}

static bool is_other(int32_t c) {
    return !is_space(c) && !is_letter(c) && !is_number(c);
}

static bool is_crlf(int32_t c) {
    return c == '\r' || c == '\n';
}

static int32_t fold(int32_t c) {
    return c == 0x17f ? 's' : (c >= 'A' && c <= 'Z') ? c + 32 : c; /* (?i) on the contractions' letters */
}

/* Length, in code points, of the pre-tokenizer's match at i: the first alternative of
 * (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
 * ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ that matches, each with the length its greedy quantifiers
 * and backtracking give. */
static size_t match_at(const int32_t *cp, size_t n, size_t i) {
    int32_t c = cp[i];
    if (c == '\'' && i + 1 < n) {
        int32_t c1 = fold(cp[i + 1]), c2 = i + 2 < n ? fold(cp[i + 2]) : 0;
        if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return 2;
        if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return 3;
    }
    size_t j = i;
    if (!is_letter(c) && !is_number(c) && !is_crlf(c) && i + 1 < n && is_letter(cp[i + 1])) j = i + 1;
    if (is_letter(cp[j])) {
        while (j < n && is_letter(cp[j])) j++;
        return j - i;
    }
    if (is_number(c)) return 1;
    j = c == ' ' ? i + 1 : i;
    if (j < n && is_other(cp[j])) {
        while (j < n && is_other(cp[j])) j++;
        while (j < n && is_crlf(cp[j])) j++;
        return j - i;
    }
    size_t end = i;
    while (end < n && is_space(cp[end])) end++;
    size_t last_nl = n;
    for (size_t k = i; k < end; k++)
        if (is_crlf(cp[k])) last_nl = k;
    if (last_nl < n) return last_nl + 1 - i;     /* \s*[\r\n]+ */
    if (end == n || end - i < 2) return end - i; /* \s+(?!\S) at the end, or \s+ */
    return end - i - 1;                          /* \s+(?!\S): the last space goes with the next word */
}

/* Merges the bytes of one split by rank, lowest first (leftmost among equals), and appends the ids. */
static int bpe(const struct tokenizer *t, const unsigned char *s, size_t n, struct ids *out) {
    int stack[64], *sym = n <= 64 ? stack : malloc(sizeof *sym * n);
    if (!sym) return -1;
    for (size_t k = 0; k < n; k++) sym[k] = t->byte_id[s[k]];
    size_t m = n;
    while (m > 1) {
        const struct tok_merge *best = NULL;
        size_t at = 0;
        for (size_t k = 0; k + 1 < m; k++) {
            const struct tok_merge *g = merge_find(t, sym[k], sym[k + 1]);
            if (g && (!best || g->rank < best->rank)) best = g, at = k;
        }
        if (!best) break;
        sym[at] = best->id;
        memmove(sym + at + 1, sym + at + 2, sizeof *sym * (m - at - 2));
        m--;
    }
    int rc = 0;
    for (size_t k = 0; k < m && rc == 0; k++) rc = ids_push(out, sym[k]);
    if (sym != stack) free(sym);
    return rc;
}

/* Normalizes one stretch of text between added tokens, splits it and encodes each split. */
static int encode_plain(const struct tokenizer *t, const char *s, size_t len, size_t base, struct ids *out,
                        struct fr_err *err) {
    if (len == 0) return 0;
    utf8proc_uint8_t *nfc = NULL;
    utf8proc_ssize_t nl = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &nfc,
                                       UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    if (nl < 0) {
        /* find the first bad byte for the message */
        size_t at = 0;
        utf8proc_int32_t cp;
        utf8proc_ssize_t l;
        while (at < len && (l = utf8proc_iterate((const utf8proc_uint8_t *)s + at,
                                                 (utf8proc_ssize_t)(len - at), &cp)) > 0)
            at += (size_t)l;
        return fr_err_set(err, "the text is not valid UTF-8 at byte %zu", base + at);
    }
    size_t n = 0, cap = (size_t)nl + 1;
    int32_t *cp = malloc(sizeof *cp * cap);
    size_t *off = malloc(sizeof *off * cap);
    if (!cp || !off) {
        free(cp);
        free(off);
        free(nfc);
        return fr_err_set(err, "out of memory for %zd bytes of text", nl);
    }
    int rc = 0;
    for (size_t at = 0; rc == 0 && at < (size_t)nl;) {
        utf8proc_ssize_t l = utf8proc_iterate(nfc + at, nl - (utf8proc_ssize_t)at, &cp[n]);
        if (l <= 0) {
            rc = fr_err_set(err, "the text is not valid UTF-8 after normalization");
            break;
        }
        off[n++] = at;
        at += (size_t)l;
    }
    if (rc == 0) off[n] = (size_t)nl;
    for (size_t i = 0; rc == 0 && i < n;) {
        size_t k = match_at(cp, n, i);
        if (bpe(t, nfc + off[i], off[i + k] - off[i], out)) rc = fr_err_set(err, "out of memory for the ids");
        i += k;
    }
    free(cp);
    free(off);
    free(nfc);
    return rc;
}

int tokenizer_encode(const struct tokenizer *t, const char *text, size_t len, int **ids, int *n,
                     struct fr_err *err) {
    struct ids out = {0};
    size_t pos = 0;
    int rc = 0;
    while (rc == 0 && pos <= len) {
        /* the leftmost added token from pos, the longest where two start at the same byte */
        size_t best_at = len, best_len = 0;
        int best_id = -1;
        for (int k = 0; k < t->n_added; k++) {
            const struct tok_piece *p = &t->pieces[t->added_ids[k]];
            const char *hit = memmem(text + pos, len - pos, t->arena + p->off, p->len);
            if (!hit) continue;
            size_t at = (size_t)(hit - text);
            if (at < best_at || (at == best_at && p->len > best_len))
                best_at = at, best_len = p->len, best_id = t->added_ids[k];
        }
        rc = encode_plain(t, text + pos, best_at - pos, pos, &out, err);
        if (rc == 0 && best_id >= 0 && ids_push(&out, best_id))
            rc = fr_err_set(err, "out of memory for the ids");
        if (best_id < 0) break;
        pos = best_at + best_len;
    }
    if (rc) {
        free(out.v);
        return rc;
    }
    *ids = out.v;
    *n = out.n;
    return 0;
}

const unsigned char *tokenizer_piece(const struct tokenizer *t, int id, size_t *len) {
    *len = 0;
    if (id < 0 || id >= t->n_vocab || t->pieces[id].len == 0) return NULL;
    *len = t->pieces[id].len;
    return t->arena + t->pieces[id].off;
}

int tokenizer_find_added(const struct tokenizer *t, const char *text) {
    size_t n = strlen(text);
    for (int k = 0; k < t->n_added; k++) {
        const struct tok_piece *p = &t->pieces[t->added_ids[k]];
        if (p->len == n && memcmp(t->arena + p->off, text, n) == 0) return t->added_ids[k];
    }
    return -1;
}

int tokenizer_load(struct tokenizer *t, const char *path, struct fr_err *err) {
    struct file_map m;
    if (file_map_open(path, 4, &m, err)) return -1;
    bool is_gguf = memcmp(m.data, "GGUF", 4) == 0;
    int rc;
    if (is_gguf) {
        struct gguf_file g;
        rc = gguf_parse(m.data, m.len, path, &g, err);
        if (rc == 0) rc = tokenizer_from_gguf(t, &g, err); /* copies what it keeps: the map can go */
        gguf_free(&g);
    }
    file_map_close(&m);
    return is_gguf ? rc : tokenizer_from_json(t, path, err);
}
