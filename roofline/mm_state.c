/* Transparent huge pages and DAMON, as sysfs shows them (mm_state.h). */
#include "roofline/mm_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first line of file `path`, without its newline; "" when it cannot be read. */
static void read_line(const char *path, char *out, size_t len) {
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (!fgets(out, (int)len, f)) out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

/* The bracketed choice of a sysfs selector line ("always [madvise] never" -> "madvise"); "" if none. */
static void selected(const char *line, char *out, size_t len) {
    const char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
    out[0] = '\0';
    if (a && b && b > a + 1) snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
}

static void read_selector(const char *sysfs, const char *name, char *out, size_t len) {
    char path[512], line[256];
    snprintf(path, sizeof path, "%s/kernel/mm/transparent_hugepage/%s", sysfs, name);
    read_line(path, line, sizeof line);
    selected(line, out, len);
}

/* Appends to buf (of len) a kdamond's operations and its schemes' actions: "paddr: pageout". */
static void describe_kdamond(const char *dir, char *buf, size_t len) {
    size_t off = strlen(buf);
    for (int c = 0; off < len; c++) {
        char path[400], ops[64];
        snprintf(path, sizeof path, "%s/contexts/%d/operations", dir, c);
        read_line(path, ops, sizeof ops);
        if (!ops[0]) break;
        off += (size_t)snprintf(buf + off, len - off, "%s%s", c ? "; " : "", ops);
        for (int s = 0; off < len; s++) {
            char action[64];
            snprintf(path, sizeof path, "%s/contexts/%d/schemes/%d/action", dir, c, s);
            read_line(path, action, sizeof action);
            if (!action[0]) break;
            off += (size_t)snprintf(buf + off, len - off, "%s%s", s ? ", " : ": ", action);
        }
    }
}

/* Appends one running DAMON user to s->damon: "kdamond 0 (paddr: pageout)" or a module's name. */
static void add_damon(struct mm_state *s, const char *what) {
    size_t off = strlen(s->damon);
    if (off < sizeof s->damon)
        snprintf(s->damon + off, sizeof s->damon - off, "%s%s", s->damon_on ? ", " : "", what);
    s->damon_on++;
}

/* The kdamonds of DAMON's sysfs interface that are on (kdamonds/0 .. nr_kdamonds - 1, in order), then the
 * DAMON modules that run a kdamond of their own when enabled (damon_reclaim, damon_lru_sort). */
static void read_damon(struct mm_state *s, const char *sysfs) {
    char root[256], path[400], line[32];
    snprintf(root, sizeof root, "%s/kernel/mm/damon/admin/kdamonds", sysfs);
    snprintf(path, sizeof path, "%s/nr_kdamonds", root);
    read_line(path, line, sizeof line);
    int n = atoi(line);
    for (int id = 0; id < n; id++) {
        char dir[320], what[sizeof s->damon];
        snprintf(dir, sizeof dir, "%s/%d", root, id);
        snprintf(path, sizeof path, "%s/state", dir);
        read_line(path, line, sizeof line);
        if (strcmp(line, "on") != 0) continue;
        snprintf(what, sizeof what, "kdamond %d (", id);
        describe_kdamond(dir, what, sizeof what - 1);
        strcat(what, ")");
        add_damon(s, what);
    }
    static const char *const modules[] = {"damon_reclaim", "damon_lru_sort"};
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
        snprintf(path, sizeof path, "%s/module/%s/parameters/enabled", sysfs, modules[i]);
        read_line(path, line, sizeof line);
        if (line[0] == 'Y' || line[0] == 'y' || line[0] == '1') add_damon(s, modules[i]);
    }
}

void mm_state_read(struct mm_state *s, const char *sysfs) {
    memset(s, 0, sizeof *s);
    read_selector(sysfs, "enabled", s->thp, sizeof s->thp);
    read_selector(sysfs, "defrag", s->thp_defrag, sizeof s->thp_defrag);
    read_damon(s, sysfs);
}

void mm_state_describe(const struct mm_state *s, char *buf, size_t len) {
    snprintf(buf, len, "transparent huge pages %s (defrag %s); DAMON %s%s", s->thp[0] ? s->thp : "unknown",
             s->thp_defrag[0] ? s->thp_defrag : "unknown", s->damon_on ? "on: " : "off", s->damon);
}

const char *mm_state_damon_note(void) {
    return "DAMON monitors and acts on this process's memory while the benchmark runs (its sampling clears "
           "pages' accessed bits; schemes such as pageout reclaim or split pages), which can move any "
           "figure, "
           "kv_append's most; as root, `echo off > /sys/kernel/mm/damon/admin/kdamonds/N/state` stops a "
           "kdamond";
}
