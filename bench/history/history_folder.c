/* Reads what the run store keeps from a run folder (run.json, samples.csv) or a compare folder (compare.md).
 * run.json is parsed with cJSON directly rather than through the report's structs: the store keeps the
 * folder's figures as written, and a run.json of an older schema (no samples, no kernel, fewer columns) reads
 * with what it has. Checked in tests/test_history_store.c against folders the tests write. */
#include "bench/history/history_folder.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/samples.h"
#include "bench/report/compare_verdict.h"

/* FNV-1a, 64 bits: a stable identity for a file's bytes or the machine's fields (not a security hash). */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}
#define FNV_START 0xcbf29ce484222325ULL

/* The whole file, NUL-terminated; NULL with errno set on failure. */
static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (ferror(f) || feof(f)) break;
        char *grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
            errno = ENOMEM;
            break;
        }
        buf = grown, cap *= 2;
    }
    int bad = buf && ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    if (buf) buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

static const char *jstr(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}
static double jnum(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
static bool jbool(const cJSON *o, const char *key) {
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static int push_row(struct history_run *r, int *cap, struct fr_err *err) {
    if (r->n_rows == *cap) {
        int nc = *cap ? *cap * 2 : 64;
        struct history_row *g = realloc(r->rows, sizeof *g * (size_t)nc);
        if (!g) return fr_err_set(err, "out of memory");
        r->rows = g, *cap = nc;
    }
    r->rows[r->n_rows] = (struct history_row){.paired_read_gbs = NAN};
    return 0;
}

/* The timing columns every measured row of run.json carries. */
static void timed_row(struct history_row *o, const cJSON *j) {
    snprintf(o->unit, sizeof o->unit, "s");
    o->median = jnum(j, "measured_s");
    o->min = jnum(j, "min_s"), o->max = jnum(j, "max_s");
    o->ci_lo = jnum(j, "ci_lo_s"), o->ci_hi = jnum(j, "ci_hi_s");
    o->paired_read_gbs = jnum(j, "paired_read_gbs");
    double reps = jnum(j, "reps");
    o->reps = isfinite(reps) ? (int)reps : 0;
    o->noisy = jbool(j, "noisy");
}

static int read_rows(const cJSON *root, struct history_run *r, struct fr_err *err) {
    int cap = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(root, "steps")) {
        if (push_row(r, &cap, err)) return -1;
        struct history_row *o = &r->rows[r->n_rows++];
        snprintf(o->key, sizeof o->key, "step@%.0f", jnum(j, "context"));
        timed_row(o, j);
    }
    double bctx = jnum(root, "blocks_context");
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(root, "blocks")) {
        if (push_row(r, &cap, err)) return -1;
        struct history_row *o = &r->rows[r->n_rows++];
        snprintf(o->key, sizeof o->key, "block:%s@%.0f", jstr(j, "name"), bctx);
        timed_row(o, j);
    }
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(root, "sampler")) {
        if (push_row(r, &cap, err)) return -1;
        struct history_row *o = &r->rows[r->n_rows++];
        const char *kind = jstr(j, "row_kind");
        bool realistic = !*kind || strcmp(kind, "realistic") == 0;
        snprintf(o->key, sizeof o->key, "sampler:%s%s%s@%.0f", jstr(j, "variant"), realistic ? "" : ".",
                 realistic ? "" : kind, jnum(j, "vocab"));
        timed_row(o, j);
    }
    const cJSON *batch = cJSON_GetObjectItemCaseSensitive(root, "batch");
    const char *own = cJSON_GetArraySize(batch) > 0 ? jstr(cJSON_GetArrayItem(batch, 0), "backend") : "";
    char own_backend[32];
    snprintf(own_backend, sizeof own_backend, "%s", own);
    cJSON_ArrayForEach(j, batch) {
        if (push_row(r, &cap, err)) return -1;
        struct history_row *o = &r->rows[r->n_rows++];
        const char *be = jstr(j, "backend");
        bool mine = strcmp(be, own_backend) == 0;
        snprintf(o->key, sizeof o->key, "batch:%.0f@%.0f%s%s", jnum(j, "batch"), jnum(j, "context"),
                 mine ? "" : ":", mine ? "" : be);
        timed_row(o, j);
    }
    /* prompt processing: the whole prefill's rows, under the key its repetitions have in samples.csv */
    cJSON_ArrayForEach(
        j, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "prefill"), "rows")) {
        if (strcmp(jstr(j, "block"), "prefill") != 0) continue;
        if (push_row(r, &cap, err)) return -1;
        struct history_row *o = &r->rows[r->n_rows++];
        compare_key_prefill_of((long)jnum(j, "prompt_len"), (long)jnum(j, "depth"), o->key, sizeof o->key);
        timed_row(o, j);
    }
    int ci = -1;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(root, "ceilings")) {
        ci++;
        double v = jnum(j, "value");
        if (!isfinite(v)) continue; /* not measured: run.json says why, there is no figure to keep */
        if (push_row(r, &cap, err)) return -1;
        struct history_row *o = &r->rows[r->n_rows++];
        snprintf(o->key, sizeof o->key, "ceiling:%s", jstr(j, "name"));
        /* a run.json's ceiling names are unique; one that is not keeps its place in the list as a suffix,
         * so no figure of the folder is dropped */
        for (int k = 0; k < r->n_rows - 1; k++)
            if (strcmp(r->rows[k].key, o->key) == 0) {
                snprintf(o->key, sizeof o->key, "ceiling:%s#%d", jstr(j, "name"), ci);
                break;
            }
        snprintf(o->unit, sizeof o->unit, "%s", jstr(j, "unit"));
        o->median = v;
        o->min = jnum(j, "min"), o->max = jnum(j, "max");
        o->ci_lo = o->ci_hi = NAN;
        double reps = jnum(j, "reps");
        o->reps = isfinite(reps) ? (int)reps : 0;
        o->noisy = jbool(j, "noisy");
    }
    return 0;
}

/* The machine's key fields. The topology is cut before the memory size and the binding: packages, NUMA
 * nodes, cores, PUs and cache sizes are the machine; the binding is a run's choice. */
static void read_machine(const cJSON *prov, struct history_machine *m) {
    snprintf(m->cpu, sizeof m->cpu, "%s", jstr(prov, "cpu"));
    snprintf(m->isa, sizeof m->isa, "%s", jstr(prov, "isa"));
    double t = jnum(prov, "threads");
    m->threads = isfinite(t) ? (int)t : 0;
    snprintf(m->topology, sizeof m->topology, "%s", jstr(prov, "topology"));
    char *cut = strstr(m->topology, ", memory ");
    if (!cut) cut = strchr(m->topology, ';');
    if (cut) *cut = '\0';
    const char *kernel = jstr(prov, "kernel");
    snprintf(m->kernel, sizeof m->kernel, "%s", *kernel ? kernel : "not recorded");
    const char *mm = jstr(prov, "mm_state");
    snprintf(m->mm_state, sizeof m->mm_state, "%s", *mm ? mm : "not recorded");
    uint64_t h = FNV_START;
    const char *parts[] = {m->cpu, m->isa, m->topology, m->kernel, m->mm_state};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) h = fnv1a(h, parts[i], strlen(parts[i]) + 1);
    h = fnv1a(h, &m->threads, sizeof m->threads);
    snprintf(m->key, sizeof m->key, "%016llx", (unsigned long long)h);
}

/* samples.csv's key -> the store's: the headline alias and the key as written otherwise. */
static void sample_key(const char *in, char *out, size_t len) {
    if (history_folder_row_key(in, out, len) != 0) snprintf(out, len, "%s", in);
}

static int row_index(const struct history_run *r, const char *key) {
    for (int i = 0; i < r->n_rows; i++)
        if (strcmp(r->rows[i].key, key) == 0) return i;
    return -1;
}

/* samples.csv through the run's own reader (roofline/samples.h), so the store reads what compare reads. */
static int read_samples(const char *dir, struct history_run *r, struct fr_err *err) {
    char path[4200];
    snprintf(path, sizeof path, "%s/" SAMPLES_FILE, dir);
    struct sample_set set = {0};
    int rc = samples_read_csv(path, &set, err);
    if (rc == 1) return 0; /* an older run: its rows' medians only */
    if (rc == 0 && set.n > 0) {
        r->samples = malloc(sizeof *r->samples * (size_t)set.n);
        if (!r->samples) rc = fr_err_set(err, "out of memory");
    }
    for (int i = 0; rc == 0 && r->samples && i < set.n; i++) {
        const struct sample *x = &set.s[i];
        struct history_sample *o = &r->samples[r->n_samples++];
        sample_key(x->row, o->key, sizeof o->key);
        o->rep = x->rep, o->time_s = x->time_s, o->paired_read_gbs = x->paired_read_gbs;
        o->disturbed = x->disturbed, o->threads = x->threads, o->mono_ns = x->mono_ns;
        snprintf(o->cause, sizeof o->cause, "%s", x->cause);
        if (row_index(r, o->key) < 0) r->unmatched_samples++;
    }
    r->has_samples = rc == 0;
    samples_free(&set);
    return rc;
}

int history_folder_read_run(const char *dir, struct history_run *out, struct fr_err *err) {
    *out = (struct history_run){0};
    char path[4200], real[PATH_MAX];
    /* the folder's absolute path: the store outlives the shell it was imported from */
    snprintf(out->folder, sizeof out->folder, "%s", realpath(dir, real) ? real : dir);
    size_t n = strlen(out->folder);
    while (n > 1 && out->folder[n - 1] == '/') out->folder[--n] = '\0';
    snprintf(path, sizeof path, "%s/run.json", out->folder);
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) return fr_err_set(err, "%s: %s", path, strerror(errno));
    snprintf(out->uid, sizeof out->uid, "%016llx", (unsigned long long)fnv1a(FNV_START, text, len));
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root) return fr_err_set(err, "%s: not valid JSON", path);
    int rc = -1;
    const cJSON *prov = cJSON_GetObjectItemCaseSensitive(root, "provenance");
    if (strcmp(jstr(root, "schema"), "forge-roofline/1") != 0 || !cJSON_IsObject(prov)) {
        fr_err_set(err, "%s: not a forge-roofline/1 run (no schema or provenance)", path);
        goto done;
    }
    snprintf(out->utc, sizeof out->utc, "%s", jstr(prov, "utc"));
    if (!out->utc[0]) {
        fr_err_set(err, "%s: provenance has no utc stamp", path);
        goto done;
    }
    snprintf(out->host, sizeof out->host, "%s", jstr(prov, "host"));
    snprintf(out->version, sizeof out->version, "%s", jstr(prov, "version"));
    snprintf(out->command_line, sizeof out->command_line, "%s", jstr(prov, "command_line"));
    snprintf(out->commit, sizeof out->commit, "%s", jstr(prov, "git_commit"));
    size_t cl = strlen(out->commit);
    if (cl > 6 && strcmp(out->commit + cl - 6, "-dirty") == 0) out->commit[cl - 6] = '\0', out->dirty = true;
    if (!out->commit[0]) snprintf(out->commit, sizeof out->commit, "unknown");
    snprintf(out->model, sizeof out->model, "%s",
             jstr(cJSON_GetObjectItemCaseSensitive(root, "model"), "name"));
    const char *mix = jstr(prov, "weights_mix"); /* a q4_k_m run is no q4_k run: its own series */
    snprintf(out->options, sizeof out->options, "dtype=%s%s%s kv=%s gemv=%s%s", jstr(prov, "dtype"),
             mix[0] ? " mix=" : "", mix, jstr(prov, "kv_dtype"), jstr(prov, "gemv_backend"),
             jbool(prov, "quick") ? " quick" : "");
    read_machine(prov, &out->machine);
    if (read_rows(root, out, err) != 0 || read_samples(out->folder, out, err) != 0) goto done;
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc) history_folder_free_run(out);
    return rc;
}

void history_folder_free_run(struct history_run *r) {
    free(r->rows);
    free(r->samples);
    r->rows = NULL, r->samples = NULL;
    r->n_rows = r->n_samples = 0;
}

int history_folder_row_key(const char *row, char *key, size_t len) {
    static const char *const prefixes[] = {"step@", "block:", "sampler:", "batch:", "pp@", "ceiling:"};
    if (strncmp(row, "sampler@", 8) == 0 && row[8]) {
        if ((size_t)snprintf(key, len, "sampler:" HISTORY_SAMPLER_HEADLINE "@%s", row + 8) >= len) return -1;
        return 0;
    }
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t pl = strlen(prefixes[i]);
        if (strncmp(row, prefixes[i], pl) == 0 && row[pl]) {
            if (strcmp(prefixes[i], "ceiling:") != 0 && !strchr(row, '@')) return -1;
            return (size_t)snprintf(key, len, "%s", row) < len ? 0 : -1;
        }
    }
    return -1;
}

/* ---- compare folders ---- */

/* Splits a markdown table row "| a | b |" into trimmed cells; returns the count. */
static int md_cells(char *line, char **cells, int max) {
    int n = 0;
    char *p = line;
    while (*p == ' ') p++;
    if (*p != '|') return 0;
    p++;
    while (*p && n < max) {
        char *bar = strchr(p, '|');
        if (!bar) break;
        *bar = '\0';
        while (*p == ' ') p++;
        char *e = bar;
        while (e > p && e[-1] == ' ') *--e = '\0';
        cells[n++] = p;
        p = bar + 1;
    }
    return n;
}

static bool md_number(const char *s, double *v) {
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *s && !*end && !errno && isfinite(*v);
}

#define MD_MAX_CELLS 24

/* compare_verdicts.csv (bench/report/compare_verdict.h), when the folder has one: its rows replace the ones
 * read from compare.md's tables. Columns are found by name, so added columns do not move them. */
static int read_verdicts(struct history_compare *out, struct fr_err *err) {
    char path[4200];
    snprintf(path, sizeof path, "%s/compare_verdicts.csv", out->folder);
    char *text = slurp(path, NULL);
    if (!text) return errno == ENOENT ? 0 : fr_err_set(err, "%s: %s", path, strerror(errno));
    enum { C_KEY, C_RATIO, C_LO, C_HI, C_P, C_VERDICT, C_N };
    static const char *const names[C_N] = {"key", "ratio", "lo", "hi", "p_adj", "verdict"};
    int col[C_N], n = 0, cap = 0, rc = 0, line_no = 0;
    struct history_compare_row *rows = NULL;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line && rc == 0; line = strtok_r(NULL, "\n", &save)) {
        char copy[1024], *cells[MD_MAX_CELLS], *p = copy;
        snprintf(copy, sizeof copy, "%s", line);
        int nc = 0;
        for (char *c; nc < MD_MAX_CELLS && (c = strsep(&p, ",")) != NULL;) cells[nc++] = c;
        if (line_no++ == 0) {
            for (int k = 0; k < C_N; k++) {
                col[k] = -1;
                for (int i = 0; i < nc; i++)
                    if (strcmp(cells[i], names[k]) == 0) col[k] = i;
                if (col[k] < 0) rc = fr_err_set(err, "%s: no '%s' column", path, names[k]);
            }
            continue;
        }
        if (n == cap) {
            int ncap = cap ? cap * 2 : 64;
            struct history_compare_row *g = realloc(rows, sizeof *g * (size_t)ncap);
            if (!g) {
                rc = fr_err_set(err, "out of memory");
                break;
            }
            rows = g, cap = ncap;
        }
        struct history_compare_row *o = &rows[n++];
        *o = (struct history_compare_row){.ratio = NAN, .ratio_lo = NAN, .ratio_hi = NAN, .p_adj = NAN};
        snprintf(o->section, sizeof o->section, "verdicts");
        snprintf(o->cells, sizeof o->cells, "%s", line);
        const char *get[C_N];
        for (int k = 0; k < C_N; k++) get[k] = col[k] < nc ? cells[col[k]] : "";
        snprintf(o->key, sizeof o->key, "%s", get[C_KEY]);
        snprintf(o->verdict, sizeof o->verdict, "%s", get[C_VERDICT]);
        double v;
        if (md_number(get[C_RATIO], &v)) o->ratio = v;
        if (md_number(get[C_LO], &v)) o->ratio_lo = v;
        if (md_number(get[C_HI], &v)) o->ratio_hi = v;
        if (md_number(get[C_P], &v)) o->p_adj = v;
    }
    free(text);
    if (rc) {
        free(rows);
        return -1;
    }
    free(out->rows);
    out->rows = rows, out->n_rows = n;
    return 0;
}

int history_folder_read_compare(const char *dir, struct history_compare *out, struct fr_err *err) {
    *out = (struct history_compare){0};
    char real[PATH_MAX];
    snprintf(out->folder, sizeof out->folder, "%s", realpath(dir, real) ? real : dir);
    size_t fl = strlen(out->folder);
    while (fl > 1 && out->folder[fl - 1] == '/') out->folder[--fl] = '\0';
    char path[4200];
    snprintf(path, sizeof path, "%s/compare.md", out->folder);
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) return fr_err_set(err, "%s: %s", path, strerror(errno));
    snprintf(out->uid, sizeof out->uid, "%016llx", (unsigned long long)fnv1a(FNV_START, text, len));
    char section[64] = "", *header[MD_MAX_CELLS];
    char header_buf[1024] = "";
    int n_header = 0, cap = 0, rc = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "## ", 3) == 0) {
            snprintf(section, sizeof section, "%s", line + 3);
            n_header = 0;
            continue;
        }
        if (strncmp(line, "- **A**:", 8) == 0 || strncmp(line, "- **B**:", 8) == 0) {
            char *dst = line[4] == 'A' ? out->run_a : out->run_b;
            snprintf(dst, sizeof out->run_a, "%s", line + 9);
            continue;
        }
        if (!out->summary[0] && strncmp(line, "- ", 2) == 0) {
            snprintf(out->summary, sizeof out->summary, "%s", line + 2);
            continue;
        }
        if (line[0] != '|') {
            n_header = 0;
            continue;
        }
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", line);
        char *cells[MD_MAX_CELLS];
        int nc = md_cells(copy, cells, MD_MAX_CELLS);
        if (nc == 0 || strncmp(cells[0], "--", 2) == 0 || strncmp(cells[0], ":-", 2) == 0) continue;
        if (n_header == 0) { /* the table's header row */
            snprintf(header_buf, sizeof header_buf, "%s", line);
            n_header = md_cells(header_buf, header, MD_MAX_CELLS);
            continue;
        }
        if (out->n_rows == cap) {
            int ncap = cap ? cap * 2 : 64;
            struct history_compare_row *g = realloc(out->rows, sizeof *g * (size_t)ncap);
            if (!g) {
                rc = fr_err_set(err, "out of memory");
                break;
            }
            out->rows = g, cap = ncap;
        }
        struct history_compare_row *o = &out->rows[out->n_rows++];
        *o = (struct history_compare_row){.ratio = NAN, .ratio_lo = NAN, .ratio_hi = NAN, .p_adj = NAN};
        snprintf(o->section, sizeof o->section, "%s", section);
        snprintf(o->cells, sizeof o->cells, "%s", line);
        /* the row's identity: the cells before the first of A's figures ("A µs", "A ms", ...) */
        size_t off = 0;
        for (int i = 0; i < nc && i < n_header && strncmp(header[i], "A ", 2) != 0; i++)
            off += (size_t)snprintf(o->key + off, off < sizeof o->key ? sizeof o->key - off : 0, "%s%s",
                                    i ? "/" : "", cells[i]);
        double v;
        for (int i = 0; i < nc && i < n_header; i++) {
            if ((strcmp(header[i], "B/A") == 0 && !isfinite(o->ratio)) ||
                strcmp(header[i], "B/A normalized") == 0) {
                if (md_number(cells[i], &v)) o->ratio = v;
            } else if (strcmp(header[i], "verdict") == 0) {
                snprintf(o->verdict, sizeof o->verdict, "%s", cells[i]);
            }
        }
    }
    free(text);
    if (rc == 0) rc = read_verdicts(out, err);
    if (rc == 0 && out->n_rows == 0) rc = fr_err_set(err, "%s: no table rows: not a compare", path);
    if (rc) history_folder_free_compare(out);
    return rc;
}

void history_folder_free_compare(struct history_compare *c) {
    free(c->rows);
    c->rows = NULL;
    c->n_rows = 0;
}
