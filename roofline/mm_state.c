/* Transparent huge pages and DAMON, as sysfs shows them (mm_state.h). */
#include "roofline/mm_state.h"

#include <dirent.h>
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

static void read_damon(struct mm_state *s, const char *sysfs) {
    char root[256];
    snprintf(root, sizeof root, "%s/kernel/mm/damon/admin/kdamonds", sysfs);
    DIR *d = opendir(root);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long id = strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end) continue; /* kdamonds/N only */
        char dir[320], path[400], state[32];
        snprintf(dir, sizeof dir, "%s/%ld", root, id);
        snprintf(path, sizeof path, "%s/state", dir);
        read_line(path, state, sizeof state);
        if (strcmp(state, "on") != 0) continue;
        size_t off = strlen(s->damon);
        if (off < sizeof s->damon)
            snprintf(s->damon + off, sizeof s->damon - off, "%skdamond %ld (", s->damon_on ? ", " : "", id);
        describe_kdamond(dir, s->damon, sizeof s->damon);
        off = strlen(s->damon);
        if (off < sizeof s->damon) snprintf(s->damon + off, sizeof s->damon - off, ")");
        s->damon_on++;
    }
    closedir(d);
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
