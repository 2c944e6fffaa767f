/* forge-roofline machine: the setup (timer resolution, threads, binding), the hwloc topology, the measured
 * ceilings (STREAM's rules, every kernel validated), counter availability with the reason, the agreement of
 * the read kernel with an independent plain loop, and a validation line last; the exit status follows
 * validation. Checked end to end in tests/test_cmd_machine.c (bad options exit 2, JSON keys). */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "kernels/kernels.h"
#include "roofline/blas_core.h"
#include "roofline/counters.h"
#include "roofline/core_speed.h"
#include "roofline/mm_state.h"
#include "roofline/timing.h"
#include "roofline/ceilings.h"
#include "roofline/topology.h"

/* Beyond this the plain loop and the read kernel are said to disagree (the line is printed either way). */
#define MACHINE_AGREE_PCT 10.0

struct machine_args {
    bool json, quick, test_sizes;
    long threads;
    const char *events;
    const char *isa; /* --isa, NULL: the best the CPU has */
};

static void machine_usage(FILE *f) {
    fprintf(f, "usage: forge-roofline machine [--format md|json] [--threads N] [--quick] [--events LIST]\n"
               "  --format md|json  output format (default md)\n"
               "  --threads N       threads, one per core (default: all cores)\n"
               "  --quick           fewer repetitions (DRAM read still >= 10 runs), sgemm 1024^3\n"
               "  --events LIST     PAPI events, comma-separated (default: PAPI_TOT_CYC, PAPI_TOT_INS,\n"
               "                    an LLC-miss event, PAPI_SP_OPS or PAPI_FP_OPS)\n"
               "  --isa NAME        " CLI_ISA_HELP "\n");
}

/* Returns -1 to go on, or the exit status (help, usage error). */
static int machine_parse(int argc, char **argv, struct machine_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = ""; /* set below for the options that take one */
        const char *eq = strchr(opt, '=');
        char name[32];
        size_t len = eq ? (size_t)(eq - opt) : strlen(opt);
        if (len >= sizeof name) return cli_usage_error("machine: unknown option '%s' (try --help)", opt);
        memcpy(name, opt, len);
        name[len] = '\0';
        bool takes = !strcmp(name, "--format") || !strcmp(name, "--threads") || !strcmp(name, "--events") ||
                     !strcmp(name, "--isa");
        if (takes) {
            if (eq)
                val = eq + 1;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                return cli_usage_error("machine: %s needs a value", name);
        } else if (eq) {
            return cli_usage_error("machine: %s takes no value", name);
        }
        if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
            machine_usage(stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(name, "--quick")) {
            a->quick = true;
        } else if (!strcmp(name, "--test-sizes")) { /* hidden: tiny arrays for the end-to-end tests */
            a->test_sizes = a->quick = true;
        } else if (!strcmp(name, "--format")) {
            if (!strcmp(val, "json"))
                a->json = true;
            else if (!strcmp(val, "md"))
                a->json = false;
            else
                return cli_usage_error("machine: --format must be md or json, not '%s'", val);
        } else if (!strcmp(name, "--threads")) {
            if (cli_parse_long(val, 1, 4096, &a->threads) != 0)
                return cli_usage_error("machine: --threads needs an integer in [1, 4096], not '%s'", val);
        } else if (!strcmp(name, "--events")) {
            a->events = val;
        } else if (!strcmp(name, "--isa")) {
            a->isa = val;
        } else {
            return cli_usage_error("machine: unknown option '%s' (try --help)", opt);
        }
    }
    int rc = cli_isa_apply("machine: ", a->isa, MATVEC_BACKEND_FORGE);
    return rc ? rc : -1;
}

static void print_bytes(const char *label, size_t bytes, int count) {
    if (!bytes) {
        printf("| %s | absent |\n", label);
        return;
    }
    if (bytes >= ((size_t)1 << 20))
        printf("| %s | %.4g MiB", label, (double)bytes / (1 << 20));
    else
        printf("| %s | %.4g KiB", label, (double)bytes / (1 << 10));
    printf(" x %d |\n", count);
}

/* Transparent huge pages and DAMON in one line (roofline/mm_state.h); returns whether a kdamond is on. */
static bool mm_line(char *buf, size_t len) {
    struct mm_state mm;
    mm_state_read(&mm, MM_STATE_SYSFS);
    mm_state_describe(&mm, buf, len);
    return mm.damon_on > 0;
}

static void print_setup(const struct machine_args *a, const struct machine *m) {
    printf("# forge-roofline machine\n\n## Setup\n\n| item | value |\n|---|---|\n");
    printf("| version | forge-roofline %s, cc %s |\n", FR_VERSION, __VERSION__);
    printf("| timer | CLOCK_MONOTONIC, resolution %.3g s |\n", timing_resolution_s());
    printf("| mode | %s |\n", a->test_sizes ? "quick, test sizes (not ceilings of this machine)"
                              : a->quick    ? "quick"
                                            : "full");
    printf("| threads | %d (one per core) |\n| binding | %s |\n", m->threads, m->binding);
    printf(
        "| isa | %s (FMA ceiling kernel, as the decode kernels; the DRAM read the fastest kernel of this "
        "ISA or AVX2 below it, named under the ceilings; copy, triad baseline; sgemm OpenBLAS's own)%s |\n",
        kernel_isa_name(kernel_isa_active()), a->isa ? ", pinned by --isa" : "");
    printf("| units | GB/s = 1e9 B/s, GFLOP/s = 1e9 FLOP/s; sizes in KiB/MiB/GiB (2^10) |\n\n");
    printf("## Topology (hwloc)\n\n| item | value |\n|---|---|\n| CPU | %s |\n", m->cpu_model);
    printf("| packages | %d |\n| NUMA nodes | %d |\n| cores | %d |\n| PUs | %d |\n", m->packages,
           m->numa_nodes, m->cores, m->pus);
    if (m->usable_cores != m->cores)
        printf("| cores this process may run on | %d (its CPU affinity at start) |\n", m->usable_cores);
    print_bytes("L1d", m->l1d_bytes, m->l1d_count);
    print_bytes("L2", m->l2_bytes, m->l2_count);
    print_bytes("L3", m->l3_bytes, m->l3_count);
    printf("| memory | %.2f GiB in the NUMA nodes (hwloc), %.2f GiB reported by the OS |\n",
           (double)m->memory_bytes / (double)(1ull << 30), (double)m->os_memory_bytes / (double)(1ull << 30));
    printf("| AVX2 | %s |\n| FMA | %s |\n| AVX-512 | %s |\n| AVX-512 BF16 | %s |\n", m->avx2 ? "yes" : "no",
           m->fma ? "yes" : "no", m->avx512f ? "yes" : "no", m->avx512bf16 ? "yes" : "no");
    printf("| threads | %d, %s |\n", m->threads, m->binding);
    char blas[256];
    blas_core_describe(blas, sizeof blas);
    printf("| OpenBLAS | %s |\n", blas);
    char mm[384];
    bool damon = mm_line(mm, sizeof mm);
    printf("| memory management | %s%s%s |\n\n", mm, damon ? "; " : "", damon ? mm_state_damon_note() : "");
    fflush(stdout);
}

/* last_why: the reason of the row before, so that one shared by consecutive rows (the matrix engine's four)
 * is said once */
static void print_figure(const char *key, int threads, const char *unit, const struct ceiling_figure *f,
                         const char **last_why) {
    if (!f->measured) {
        printf("| %s | %d | unavailable: %s | | | | | |\n", key, threads,
               strcmp(f->why, *last_why) == 0 ? "the same" : f->why);
        *last_why = f->why;
        return;
    }
    *last_why = "";
    printf("| %s | %d | %.2f | %.2f | %.2f | %.2f | %d | %s%s |\n", key, threads, f->best, f->median, f->min,
           f->max, f->reps, unit, f->noisy ? ", noisy (median CI wider than ±5 %)" : "");
}

static void print_ceilings(const struct ceilings *c) {
    printf("## Ceilings (best of the runs is the ceiling)\n\n");
    char capped[80] = "";
    if (c->dram_array_capped)
        snprintf(capped, sizeof capped, ", 1/%d of the memory: less than 4x the LLC",
                 CEILINGS_DRAM_MEMORY_SHARE);
    printf("DRAM arrays %.4g MiB each%s (read: %s kernel); cache sets per thread: L1 %.4g KiB, L2 %.4g KiB, "
           "L3 %.4g KiB; FMA: %s; sgemm %d^3 (OpenBLAS).\n\n",
           (double)c->dram_array_bytes / (1 << 20), capped, c->read_kernel[0], (double)c->set_bytes[0] / 1024,
           (double)c->set_bytes[1] / 1024, (double)c->set_bytes[2] / 1024, c->fma_isa, c->sgemm_n);
    printf("| ceiling | threads | best | median | min | max | reps | unit "
           "|\n|---|---|---|---|---|---|---|---|\n");
    const char *last_why = "";
    for (int k = 0; k < CEILING_COUNT; k++) {
        enum ceiling_kind kind = (enum ceiling_kind)k;
        print_figure(ceilings_key(kind, false), c->threads, ceilings_unit(kind), &c->all[k], &last_why);
        print_figure(ceilings_key(kind, true), 1, ceilings_unit(kind), &c->one[k], &last_why);
    }
    print_figure("plain_read_gbs", c->threads, "GB/s", &c->plain_read, &last_why);
    print_figure("read_paired_gbs", c->threads, "GB/s", &c->read_paired, &last_why);
    print_figure("dram_read_slice_gbs", c->threads, "GB/s", &c->read_slice, &last_why);
    char read[512];
    ceilings_describe_read(c, read, sizeof read);
    printf("\nThe %s.\n\n", read);
}

static void print_counters(const struct counters *cn, const struct counters_calibration *cal) {
    printf("## Counters (PAPI)\n\n");
    if (cn->available)
        printf("available: yes%s%s\n\n", cn->reason[0] ? "; " : "", cn->reason);
    else
        printf("available: no: %s (figures are wall time only; nothing is estimated)\n\n", cn->reason);
    for (int i = 0; i < cn->n_events; i++) {
        const struct counters_event *e = &cn->events[i];
        if (e->counted)
            printf("- %s: counted\n", e->name);
        else
            printf("- %s: not counted: %s\n", e->name, e->reason);
    }
    if (cal->available)
        printf("\ncalibration: %s x 64 B = %.4g B over %.4g B read: ratio %.3f\n\n", cal->event,
               cal->counted_bytes, cal->known_bytes, cal->ratio);
    else
        printf("\ncalibration: unavailable: %s\n\n", cal->reason);
}

static void print_agreement(const struct ceilings *c) {
    double d = c->plain_diff_pct, ad = d < 0 ? -d : d;
    const char *how =
        ad <= MACHINE_AGREE_PCT ? "agrees with plain loop within" : "differs from plain loop by";
    printf("read bandwidth %s %.1f %% (plain loop %s; median over %d alternating pairs of runs, %d threads; "
           "best: "
           "%s kernel %.2f GB/s, plain scalar loop %.2f GB/s)%s\n",
           how, ad, d >= 0 ? "slower" : "faster", c->plain_read.reps, c->threads, c->read_kernel[0],
           c->read_paired.best, c->plain_read.best,
           ad <= MACHINE_AGREE_PCT ? "" : ": look before trusting the read ceiling");
}

struct calib_ctx {
    const float *a;
    size_t n;
    double sum;
};

static void calib_region(void *vctx) {
    struct calib_ctx *x = vctx;
    x->sum = ceilings_read_sum(x->a, x->n);
}

/* Counter-derived bytes of one DRAM read over known bytes, when an LLC-miss event is counted. */
static void machine_calibrate(struct counters *cn, size_t bytes, double line_bytes,
                              struct counters_calibration *cal) {
    struct calib_ctx x = {.n = bytes / sizeof(float)};
    if (!cn->available) {
        counters_calibrate(cn, calib_region, &x, (double)bytes, line_bytes, cal); /* fills the reason */
        return;
    }
    float *a = malloc(x.n * sizeof(float));
    if (!a) {
        *cal = (struct counters_calibration){0};
        snprintf(cal->reason, sizeof cal->reason, "calibration array of %zu bytes: allocation failed", bytes);
        return;
    }
    for (size_t i = 0; i < x.n; i++) a[i] = 1.0f;
    x.a = a;
    counters_calibrate(cn, calib_region, &x, (double)bytes, line_bytes, cal);
    free(a);
}

/* Each core's speed before and after the ceilings (roofline/core_speed.h), in words and as the slowest
 * over the fastest. */
struct machine_speed {
    char text[640];
    double low;
};

static void machine_speed_fill(struct machine_speed *s, const struct core_speed_log *log) {
    core_speed_describe(log, kernel_isa_name(kernel_isa_active()), s->text, sizeof s->text);
    s->low = core_speed_low(log);
}

static int machine_json(const struct machine_args *a, const struct machine *m, const struct ceilings *c,
                        const struct counters *cn, const struct counters_calibration *cal,
                        const struct machine_speed *speed, bool passed, const char *message) {
    cJSON *root = cJSON_CreateObject(), *setup = NULL, *val = NULL, *cj = NULL, *nj = NULL;
    char blas[256];
    blas_core_describe(blas, sizeof blas);
    char mm[384];
    bool damon = mm_line(mm, sizeof mm);
    bool ok = root && (setup = cJSON_AddObjectToObject(root, "setup")) &&
              cJSON_AddStringToObject(setup, "memory_management", mm) &&
              cJSON_AddBoolToObject(setup, "damon_on", damon) &&
              cJSON_AddNumberToObject(setup, "timer_resolution_s", timing_resolution_s()) &&
              cJSON_AddNumberToObject(setup, "threads", m->threads) &&
              cJSON_AddStringToObject(setup, "core_speed", speed->text) &&
              (isfinite(speed->low) ? cJSON_AddNumberToObject(setup, "core_speed_low", speed->low)
                                    : cJSON_AddNullToObject(setup, "core_speed_low")) &&
              cJSON_AddStringToObject(setup, "binding", m->binding) &&
              cJSON_AddStringToObject(setup, "blas_core", blas) &&
              cJSON_AddStringToObject(setup, "isa", kernel_isa_name(kernel_isa_active())) &&
              cJSON_AddStringToObject(setup, "mode",
                                      a->test_sizes ? "test"
                                      : a->quick    ? "quick"
                                                    : "full") &&
              machine_to_json(m, root) == 0;
    if (ok && passed) {
        ok = (cj = ceilings_to_json(c)) != NULL;
        if (ok) cJSON_AddItemToObject(root, "ceilings", cj);
    } else if (ok) {
        ok = cJSON_AddNullToObject(root, "ceilings") != NULL;
    }
    if (ok && (nj = counters_to_json(cn, cal))) cJSON_AddItemToObject(root, "counters", nj);
    ok = ok && nj && (val = cJSON_AddObjectToObject(root, "validation")) &&
         cJSON_AddBoolToObject(val, "passed", passed) && cJSON_AddStringToObject(val, "message", message);
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text) return cli_fail("machine: JSON output: allocation failed");
    puts(text);
    free(text);
    return 0;
}

int cmd_machine(int argc, char **argv) {
    struct machine_args a = {0};
    int rc = machine_parse(argc, argv, &a);
    if (rc >= 0) return rc;

    struct machine m;
    struct fr_err err = {{0}};
    if (machine_detect(&m, 0, &err) != 0) return cli_fail("machine: topology: %s", err.msg);
    if (machine_threads_fit(&m, (int)a.threads, &err))
        return cli_usage_error("machine: --threads %ld: %s", a.threads, err.msg);
    if (a.threads) m.threads = (int)a.threads;
    if (machine_bind_threads(&m, &err) != 0) {
        fprintf(stderr, "forge-roofline: machine: threads not bound: %s\n", err.msg);
        snprintf(m.binding, sizeof m.binding, "not bound (binding failed; see stderr)");
    }
    struct counters cn;
    const void *src_cfg = NULL;
    const struct counters_source *src = cli_counter_source(&src_cfg);
    if (counters_open(&cn, src, src_cfg, a.events, m.threads, &err) != 0)
        return cli_usage_error("machine: %s", err.msg);

    if (!a.json) print_setup(&a, &m);
    struct ceilings_opts o = {.quick = a.quick};
    if (a.test_sizes) ceilings_opts_test_sizes(&o);
    struct ceilings c;
    struct core_speed_log log = {0};
    bool passed = core_speed_probe(&log, "before the ceilings", m.threads) == 0;
    if (!passed)
        snprintf(err.msg, sizeof err.msg,
                 "core speed probe: out of memory, or its attention output was not finite");
    passed = passed && ceilings_measure(&m, &o, &c, &err) == 0;
    if (passed && core_speed_probe(&log, "after them", m.threads) != 0) {
        snprintf(err.msg, sizeof err.msg,
                 "core speed probe: out of memory, or its attention output was not finite");
        passed = false;
    }
    struct machine_speed speed = {"", NAN};
    if (passed) machine_speed_fill(&speed, &log);
    char message[600];
    if (passed)
        snprintf(message, sizeof message,
                 "PASSED (read sums exact, copy and triad element by element, FMA lanes against fmaf, sgemm "
                 "at 64 entries)");
    else
        snprintf(message, sizeof message, "FAILED: %s", err.msg);
    struct counters_calibration cal;
    machine_calibrate(&cn, passed ? c.dram_array_bytes : (size_t)64 << 20, m.llc_line_bytes, &cal);

    if (a.json) {
        rc = machine_json(&a, &m, &c, &cn, &cal, &speed, passed, message);
    } else {
        if (passed) print_ceilings(&c);
        char low[96];
        core_speed_low_words(speed.low, low, sizeof low);
        if (passed)
            printf("## Core speed\n\n%s%s%s.\n\n", speed.text, low,
                   speed.low < CORE_SPEED_MOVED
                       ? ": compute-bound figures measured in a slow spell read low (on a VM, most likely "
                         "a busy sibling hyperthread on the host), which the read ceilings do not show"
                       : "");
        print_counters(&cn, &cal);
        if (passed) print_agreement(&c);
        printf("validation: %s\n", message);
        rc = 0;
    }
    counters_close(&cn);
    if (rc) return rc;
    if (!passed) return cli_fail("machine: %s", err.msg);
    return CLI_EXIT_OK;
}
