/* The search for shipped data folders (model/, scripts/): the current folder, the build tree beside the
 * binary, the install's share folder. Checked in tests/test_datadir.c (order and labels on a fake
 * executable path, first match wins) and end to end from a temporary folder. */
#include "model/datadir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void add_place(struct datadir_places *p, const char *dir, const char *label) {
    if (p->n >= DATADIR_MAX_PLACES) return;
    if ((size_t)snprintf(p->dir[p->n], sizeof p->dir[0], "%s", dir) >= sizeof p->dir[0]) return;
    snprintf(p->label[p->n], sizeof p->label[0], "%s", label);
    p->n++;
}

/* The folder above the executable's folder ("/src/build/forge-roofline" -> "/src"); -1 when there is none. */
static int exe_grandparent(const char *exe, char *out, size_t len) {
    char buf[DATADIR_PATH_LEN];
    if (exe) {
        if ((size_t)snprintf(buf, sizeof buf, "%s", exe) >= sizeof buf) return -1;
    } else {
        ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        if (n <= 0) return -1;
        buf[n] = '\0';
    }
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(buf, '/');
        if (!slash) return -1;
        *slash = '\0';
    }
    if (!buf[0]) snprintf(buf, sizeof buf, "/"); /* the binary sat in /bin or /: its parent is the root */
    return (size_t)snprintf(out, len, "%s", buf) < len ? 0 : -1;
}

void datadir_places_of(const char *sub, const char *env_override, const char *exe, struct datadir_places *p) {
    memset(p, 0, sizeof *p);
    char dir[DATADIR_PATH_LEN], label[64];
    const char *env = env_override ? getenv(env_override) : NULL;
    if (env && *env) {
        snprintf(label, sizeof label, "$%s", env_override);
        add_place(p, env, label);
    }
    snprintf(dir, sizeof dir, "%s", sub);
    snprintf(label, sizeof label, "./%s", sub);
    add_place(p, dir, label);
    char root[DATADIR_PATH_LEN];
    if (exe_grandparent(exe, root, sizeof root) != 0) return;
    const char *sep = strcmp(root, "/") == 0 ? "" : "/";
    if ((size_t)snprintf(dir, sizeof dir, "%s%s%s", root, sep, sub) < sizeof dir) add_place(p, dir, "");
    if ((size_t)snprintf(dir, sizeof dir, "%s%sshare/forge-roofline/%s", root, sep, sub) < sizeof dir)
        add_place(p, dir, "");
}

static int is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int datadir_find_file(const struct datadir_places *p, const char *entry, char *out, size_t len) {
    for (int i = 0; i < p->n; i++)
        if ((size_t)snprintf(out, len, "%s/%s", p->dir[i], entry) < len && is_file(out)) return i;
    if (len) out[0] = '\0';
    return -1;
}

int datadir_find_dir(const struct datadir_places *p, char *out, size_t len) {
    for (int i = 0; i < p->n; i++) {
        struct stat st;
        if (stat(p->dir[i], &st) == 0 && S_ISDIR(st.st_mode) &&
            (size_t)snprintf(out, len, "%s", p->dir[i]) < len)
            return i;
    }
    if (len) out[0] = '\0';
    return -1;
}

void datadir_list_places(const struct datadir_places *p, char *buf, size_t len) {
    size_t used = 0;
    if (len) buf[0] = '\0';
    for (int i = 0; i < p->n && used < len; i++) {
        const char *sep = i ? ", " : "";
        int w = p->label[i][0] && p->label[i][0] == '$'
                    ? snprintf(buf + used, len - used, "%s%s (%s)", sep, p->label[i], p->dir[i])
                : p->label[i][0] ? snprintf(buf + used, len - used, "%s%s", sep, p->label[i])
                                 : snprintf(buf + used, len - used, "%s%s", sep, p->dir[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
}
