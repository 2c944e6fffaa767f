/* Each core's compute speed at a few moments of a run (core_speed.h). */
#include "roofline/core_speed.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/team.h"
#include "roofline/timing.h"

#define PROBE_DIM   128
#define PROBE_GROUP 2

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The calling thread's attention rate from L2 in GB/s of K and V; -1 on allocation failure or a non-finite
 * output. Its own buffers, so that they live in this core's caches. */
static double probe_here(void) {
    const size_t rows = (size_t)CORE_SPEED_POS * PROBE_DIM;
    uint16_t *kv = malloc(2 * rows * sizeof *kv);
    float *q = malloc(sizeof(float) * PROBE_GROUP * PROBE_DIM),
          *out = malloc(sizeof(float) * PROBE_GROUP * PROBE_DIM),
          *scratch = malloc(sizeof(float) * PROBE_GROUP * CORE_SPEED_POS);
    double rate = -1;
    if (kv && q && out && scratch) {
        /* small values of both signs, as bf16 (the top half of an f32's bits) */
        for (size_t i = 0; i < 2 * rows; i++) {
            float f = (float)((int)(i * 2654435761u % 2001u) - 1000) / 1000.0f;
            uint32_t u;
            memcpy(&u, &f, sizeof u);
            kv[i] = (uint16_t)(u >> 16);
        }
        for (int i = 0; i < PROBE_GROUP * PROBE_DIM; i++) q[i] = (float)(i % 17 - 8) / 8.0f;
        double runs[CORE_SPEED_RUNS];
        int finite = 1;
        for (int r = 0; r < CORE_SPEED_RUNS; r++) {
            double t0 = timing_now_s();
            for (int c = 0; c < CORE_SPEED_CALLS; c++)
                attention_serial(out, q, kv, kv + rows, FR_DTYPE_BF16, CORE_SPEED_POS, rows, PROBE_GROUP, 1,
                                 PROBE_DIM, scratch);
            double t = timing_now_s() - t0;
            runs[r] = t > 0 ? (double)CORE_SPEED_CALLS * 2.0 * (double)rows * sizeof *kv / t / 1e9 : 0;
            finite &= isfinite(out[0]) && isfinite(out[PROBE_GROUP * PROBE_DIM - 1]);
        }
        qsort(runs, CORE_SPEED_RUNS, sizeof runs[0], cmp_double);
        rate = finite ? runs[CORE_SPEED_RUNS / 2] : -1;
    }
    free(kv);
    free(q);
    free(out);
    free(scratch);
    return rate;
}

/* The team the probe asks for: 1 to CORE_SPEED_MAX_CORES threads. */
static int probe_team(int threads) {
    return threads < 1 ? 1 : threads > CORE_SPEED_MAX_CORES ? CORE_SPEED_MAX_CORES : threads;
}

int core_speed_probe(struct core_speed_log *log, const char *when, int threads) {
    struct core_speed s = {.when = when, .asked = threads < 1 ? 1 : threads};
    int bad = 0;
#pragma omp parallel num_threads(probe_team(threads)) reduction(+ : bad)
    {
        int t = kernel_team_thread(), nt = kernel_team_size();
        if (t == 0) s.cores = nt;
        for (int c = 0; c < nt; c++) {
            if (t == c) {
                s.gbs[c] = probe_here();
                bad += s.gbs[c] < 0;
            }
#pragma omp barrier
        }
    }
    if (bad) return -1;
    if (log->n < CORE_SPEED_MAX_PROBES) log->probe[log->n++] = s;
    return 0;
}

/* Widens [*lo, *hi] to one moment's rates. */
static void widen_range(const struct core_speed *s, double *lo, double *hi) {
    for (int c = 0; c < s->cores; c++) {
        *lo = s->gbs[c] < *lo ? s->gbs[c] : *lo;
        *hi = s->gbs[c] > *hi ? s->gbs[c] : *hi;
    }
}

double core_speed_low(const struct core_speed_log *log) {
    double lo = INFINITY, hi = 0;
    for (int k = 0; k < log->n; k++) widen_range(&log->probe[k], &lo, &hi);
    return hi > 0 ? lo / hi : NAN;
}

void core_speed_low_words(double low, char *buf, size_t len) {
    if (!len) return;
    buf[0] = '\0';
    if (isfinite(low)) snprintf(buf, len, "; the slowest probe at %.0f %% of the fastest", 100 * low);
}

/* Appends one moment's rates to buf at *used: "v0 / v1 / ..." up to 4 cores, else "lo-hi". */
static void append_rates(const struct core_speed *s, char *buf, size_t len, size_t *used) {
    if (s->cores > 4) {
        double lo = INFINITY, hi = 0;
        widen_range(s, &lo, &hi);
        *used += (size_t)snprintf(buf + *used, len - *used, "%.1f-%.1f", lo, hi);
        return;
    }
    for (int c = 0; c < s->cores && *used < len; c++)
        *used += (size_t)snprintf(buf + *used, len - *used, "%s%.1f", c ? " / " : "", s->gbs[c]);
}

void core_speed_describe(const struct core_speed_log *log, const char *isa, char *buf, size_t len) {
    if (!len) return;
    buf[0] = '\0';
    if (log->n < 1) return;
    int cores = log->probe[0].cores;
    size_t used;
    if (cores > 4)
        used = (size_t)snprintf(buf, len, "cores 0-%d", cores - 1);
    else {
        used = (size_t)snprintf(buf, len, "core%s ", cores > 1 ? "s" : "");
        for (int c = 0; c < cores && used < len; c++)
            used += (size_t)snprintf(buf + used, len - used, "%s%d", c ? " / " : "", c);
    }
    for (int k = 0; k < log->n && used < len; k++) {
        used += (size_t)snprintf(buf + used, len - used, "%s", k ? ", " : ": ");
        if (used < len) append_rates(&log->probe[k], buf, len, &used);
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s %s", k ? "" : " GB/s",
                                     log->probe[k].when ? log->probe[k].when : "");
    }
    if (used < len)
        snprintf(buf + used, len - used,
                 " (attention from L2 on one core at a time, %s: one KV head, %d query heads of %d, %d bf16 "
                 "positions; median of %d runs%s)",
                 isa ? isa : "?", PROBE_GROUP, PROBE_DIM, CORE_SPEED_POS, CORE_SPEED_RUNS,
                 log->probe[0].asked > cores ? "; the run's other cores not probed" : "");
}
