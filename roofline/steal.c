/* Steal time from /proc/stat (see steal.h). The file is kept open and read with pread from offset 0, which
 * makes the kernel write it afresh: no open per repetition. Checked in tests/test_steal.c: the parser on
 * captured text (with and without steal, cpuN lines counted), a file that grows its steal between reads,
 * and repetitions marked by the steal they saw. */
#include "roofline/steal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int steal_parse(const char *text, unsigned long long *steal_ticks, int *cpus) {
    bool found = false;
    *cpus = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, "cpu", 3) != 0) continue;
        if (line[3] >= '0' && line[3] <= '9') {
            (*cpus)++;
            continue;
        }
        if (line[3] != ' ') continue;
        /* cpu user nice system idle iowait irq softirq steal ... */
        unsigned long long v[8];
        if (sscanf(line + 3, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7]) != 8)
            return -1;
        *steal_ticks = v[7];
        found = true;
    }
    return found ? 0 : -1;
}

/* The file's first part: the "cpu" lines come first, before the long "intr" line. */
static int read_head(int fd, char *buf, size_t len) {
    ssize_t n = pread(fd, buf, len - 1, 0);
    if (n < 0) return -1;
    buf[n] = '\0';
    char *intr = strstr(buf, "\nintr");
    if (intr) intr[1] = '\0';
    return 0;
}

int steal_open(struct steal_clock *s, const char *path, struct fr_err *err) {
    *s = (struct steal_clock){.fd = -1};
    if (!path) path = "/proc/stat";
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0) return fr_err_set(err, "steal: sysconf(_SC_CLK_TCK) gives no tick length");
    s->tick_s = 1.0 / (double)hz;
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0) return fr_err_set(err, "steal: cannot open %s: %s", path, strerror(errno));
    double first;
    if (steal_read_s(s, &first, err) != 0) {
        steal_close(s);
        return -1;
    }
    return 0;
}

int steal_read_s(struct steal_clock *s, double *steal_s, struct fr_err *err) {
    char buf[16384];
    unsigned long long ticks;
    if (read_head(s->fd, buf, sizeof buf) != 0) return fr_err_set(err, "steal: read: %s", strerror(errno));
    if (steal_parse(buf, &ticks, &s->cpus) != 0)
        return fr_err_set(err, "steal: no 'cpu' line with a steal field");
    if (s->cpus < 1) s->cpus = 1;
    *steal_s = (double)ticks * s->tick_s;
    return 0;
}

void steal_close(struct steal_clock *s) {
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
}
