/* The roofs of a run from its measured ceilings: per memory level the best read bandwidth, peak FMA, the
 * exp throughput and the two overhead floors, for all threads and for one core. A level whose ceiling
 * could not be measured takes the next slower measured level's (L1 -> L2 -> L3 -> DRAM), and that
 * fallback is said in `notes`: a roof never changes meaning silently. */
#ifndef FR_ROOFS_H
#define FR_ROOFS_H

#include <stddef.h>

#include "roofline/ceilings.h"
#include "roofline/roofline.h"

/* Fills all and one from c; notes gets one sentence per fallback ("" when none). An all-threads rate below
 * the one-core rate (other cores busy while it was measured) is replaced by the one-core rate, and said:
 * a team is never slower than one of its threads, and a roof must hold. The same holds for the call floor
 * (the same call on any thread), not for the fork floor: a team's fork and join cost more than a team of
 * one's region, so the team's fork floor is its own measurement. Returns the number of fallbacks. */
int roofs_from_ceilings(const struct ceilings *c, struct roofline_rates *all, struct roofline_rates *one,
                        char *notes, size_t notes_len);

/* Sets all->quant_gweights and one->quant_gweights from the measured roof of block format dtype (Q8_0 or
 * Q4_0: its GFLOP/s at 2 a weight, halved; NaN for another dtype). An unmeasured roof is said in notes (its
 * blocks' FLOPs then stay on the FMA roof, as the caller must do); an all-threads rate below one core's is
 * raised to it, and said, as for the other rates. Returns the number of notes added. */
int roofs_set_quant(const struct ceilings *c, int dtype, struct roofline_rates *all,
                    struct roofline_rates *one, char *notes, size_t notes_len);
/* The same for every quantised format, into all->quant_type_gweights[t] and one's: each from its own
 * measured roof (ceilings_quant_kind), raised to one core's where below it. Notes only for the formats in
 * `types` (bit 1u << t: the run's matrices', model/cost.h block_cost wtypes), each as roofs_set_quant says
 * it; an unmeasured format's FLOPs then stay on the FMA roof. Returns the number of notes added. */
int roofs_set_quant_types(const struct ceilings *c, unsigned types, struct roofline_rates *all,
                          struct roofline_rates *one, char *notes, size_t notes_len);

/* Raises the DRAM read roof of all threads to gbs when gbs is faster: the read ceiling is the best read
 * observed anywhere in the run (ceiling repetitions, the reads paired with steps, the evictions before
 * cold blocks), all by the same kernel. Returns 1 when raised. */
int roofs_raise_dram(struct roofline_rates *all, double gbs);

#endif
