/* Roofs from ceilings (see roofs.h). Checked in tests/test_roofline.c: every rate from its ceiling, the
 * fallback of an unmeasured cache level to the next slower one and the sentence that says so, the DRAM roof
 * raised by a faster observed read and never lowered. */
#include "roofline/roofs.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const enum ceiling_kind level_kind[ROOFLINE_LEVELS] = {CEILING_DRAM_READ, CEILING_L1_READ,
                                                              CEILING_L2_READ, CEILING_L3_READ};

static double best_or_nan(const struct ceiling_figure *f) {
    return f->measured && f->best > 0 && isfinite(f->best) ? f->best : NAN;
}

static int fill(const struct ceiling_figure *f, const char *who, struct roofline_rates *r, char *notes,
                size_t len) {
    int fallbacks = 0;
    for (int l = 0; l < ROOFLINE_LEVELS; l++) r->level_gbs[l] = best_or_nan(&f[level_kind[l]]);
    /* L3, then L2, then L1: each missing level takes the next slower one already settled */
    for (int l = ROOFLINE_LEVELS - 1; l >= 1; l--) {
        if (isfinite(r->level_gbs[l])) continue;
        int slower = l + 1 < ROOFLINE_LEVELS ? l + 1 : 0;
        r->level_gbs[l] = r->level_gbs[slower];
        fallbacks++;
        size_t used = strlen(notes);
        if (used + 1 < len)
            snprintf(notes + used, len - used,
                     "%s%s L%d read ceiling not measured (%s): L%d bytes charged at the %s read ceiling.",
                     used ? " " : "", who, l,
                     f[level_kind[l]].why[0] ? f[level_kind[l]].why : "no reason given", l,
                     roofline_term_name((enum roofline_term)slower));
    }
    r->peak_gflops = best_or_nan(&f[CEILING_PEAK_FLOPS]);
    r->quant_gweights = NAN; /* the quantised formats': roofs_set_quant, roofs_set_quant_types */
    for (int t = 0; t < FR_DTYPE_COUNT; t++) r->quant_type_gweights[t] = NAN;
    r->exp_gexps = best_or_nan(&f[CEILING_EXP]);
    r->sampler_exp_gexps = best_or_nan(&f[CEILING_SAMPLER_EXP]);
    double call = best_or_nan(&f[CEILING_CALL]), fork = best_or_nan(&f[CEILING_FORK]),
           barrier = best_or_nan(&f[CEILING_BARRIER]);
    r->call_s = 1.0 / (call * 1e6);
    r->fork_s = 1.0 / (fork * 1e6);
    r->barrier_s = 1.0 / (barrier * 1e6);
    return fallbacks;
}

/* A team is never slower than one of its threads, so an all-threads rate below the one-core rate (the
 * other cores were busy while it was measured, as on a shared VM) would be no roof: the one-core rate is
 * used, and said. */
static int at_least(double *all, double one, const char *what, char *notes, size_t len) {
    if (!(one > *all) && isfinite(*all)) return 0;
    if (!isfinite(one)) return 0;
    size_t used = strlen(notes);
    if (used + 1 < len)
        snprintf(notes + used, len - used, "%sall-threads %s %.4g < one core's %.4g: one core's used.",
                 used ? " " : "", what, *all, one);
    *all = one;
    return 1;
}

int roofs_from_ceilings(const struct ceilings *c, struct roofline_rates *all, struct roofline_rates *one,
                        char *notes, size_t notes_len) {
    if (notes_len) notes[0] = '\0';
    int n =
        fill(c->all, "all-threads", all, notes, notes_len) + fill(c->one, "one-core", one, notes, notes_len);
    static const char *const level_what[ROOFLINE_LEVELS] = {"DRAM read GB/s", "L1 read GB/s", "L2 read GB/s",
                                                            "L3 read GB/s"};
    for (int l = 0; l < ROOFLINE_LEVELS; l++)
        n += at_least(&all->level_gbs[l], one->level_gbs[l], level_what[l], notes, notes_len);
    n += at_least(&all->peak_gflops, one->peak_gflops, "peak GFLOP/s", notes, notes_len);
    n += at_least(&all->exp_gexps, one->exp_gexps, "exp Gexp/s", notes, notes_len);
    n += at_least(&all->sampler_exp_gexps, one->sampler_exp_gexps, "sampler exp Gexp/s", notes, notes_len);
    /* The floors are fixed costs per call. A call that opens no parallel region is the same work on any
     * thread: the all-threads figure (every thread calling at once, as slow as the slowest thread) measures
     * the same cost as one core's, so the lower of the two is the floor. A fork is not the same work on a
     * team as on a team of one: waking the others and waiting for all of them at the join barrier costs
     * more, so one core's fork figure is no bound on the team's, and the team's floor stays as measured. */
    double all_call = 1 / all->call_s;
    n += at_least(&all_call, 1 / one->call_s, "call rate (1/s)", notes, notes_len);
    all->call_s = 1 / all_call;
    return n;
}

int roofs_raise_dram(struct roofline_rates *all, double gbs) {
    if (!(isfinite(gbs) && gbs > all->level_gbs[ROOFLINE_TERM_DRAM])) return 0;
    all->level_gbs[ROOFLINE_TERM_DRAM] = gbs;
    return 1;
}

/* Format dtype's rates from its measured roof into *all and *one (NaN when unmeasured or no quantised
 * type), the all-threads one raised to one core's. The notes (the raise, an unmeasured roof) go to notes
 * only when `say`. Returns the number of notes. */
static int set_quant_rate(const struct ceilings *c, int dtype, double *all, double *one, bool say,
                          char *notes, size_t notes_len) {
    *all = *one = NAN;
    int k = ceilings_quant_kind(dtype);
    if (k < 0) return 0;
    *all = best_or_nan(&c->all[k]) / 2;
    *one = best_or_nan(&c->one[k]) / 2;
    const char *key = ceilings_key((enum ceiling_kind)k, false);
    char scratch[1];
    if (!say) notes = scratch, notes_len = sizeof scratch, scratch[0] = '\0';
    int n = at_least(all, *one, key, notes, notes_len);
    if (isfinite(*all)) return say ? n : 0;
    size_t used = strlen(notes);
    if (used + 1 < notes_len)
        snprintf(notes + used, notes_len - used,
                 "%s%s not measured (%s): the %s matvecs' FLOPs charged to the f32 FMA roof.",
                 used ? " " : "", key, c->all[k].why[0] ? c->all[k].why : "no reason given",
                 fr_dtype_is_block((enum fr_dtype)dtype) ? "block-format"
                                                         : fr_dtype_name((enum fr_dtype)dtype));
    return say ? n + 1 : 0;
}

int roofs_set_quant(const struct ceilings *c, int dtype, struct roofline_rates *all,
                    struct roofline_rates *one, char *notes, size_t notes_len) {
    return set_quant_rate(c, dtype, &all->quant_gweights, &one->quant_gweights, true, notes, notes_len);
}

int roofs_set_quant_types(const struct ceilings *c, unsigned types, struct roofline_rates *all,
                          struct roofline_rates *one, char *notes, size_t notes_len) {
    int n = 0;
    for (int t = 0; t < FR_DTYPE_COUNT; t++)
        n += set_quant_rate(c, t, &all->quant_type_gweights[t], &one->quant_type_gweights[t],
                            (types >> t) & 1u, notes, notes_len);
    return n;
}
