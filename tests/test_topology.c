/* Topology from synthetic hwloc descriptions (hand-counted objects and sizes), the live machine, binding. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <string.h>

#include "roofline/topology.h"

#define MiB ((size_t)1 << 20)
#define KiB ((size_t)1 << 10)

Test(topology, two_packages_shared_l3) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_from_synthetic(&m, "pack:2 l3:1(size=16777216) core:4 pu:1", 0, &err), 0, "%s",
                 err.msg);
    cr_expect_eq(m.packages, 2);
    cr_expect_eq(m.numa_nodes, 1); /* hwloc inserts one NUMA node when none is described */
    cr_expect_eq(m.cores, 8);
    cr_expect_eq(m.pus, 8);
    cr_expect_eq(m.l3_bytes, 16 * MiB);
    cr_expect_eq(m.l3_count, 2);
    cr_expect_eq(m.l2_bytes, 0);
    cr_expect_eq(m.l1d_bytes, 0);
    cr_expect_eq(m.llc_level, 3);
    cr_expect_eq(m.llc_total_bytes, 32 * MiB);
    cr_expect_eq(m.threads, 8);
    cr_expect_str_eq(m.binding, "not bound");
}

Test(topology, four_numa_nodes) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_from_synthetic(&m, "pack:1 numa:4 core:2 pu:1", 3, &err), 0, "%s", err.msg);
    cr_expect_eq(m.packages, 1);
    cr_expect_eq(m.numa_nodes, 4);
    cr_expect_eq(m.cores, 8);
    cr_expect_eq(m.pus, 8);
    cr_expect_eq(m.memory_bytes, 4ull << 30); /* hwloc gives each synthetic node 1 GiB */
    cr_expect_eq(m.threads, 3);
    cr_expect_eq(m.llc_level, 0);
    cr_expect_eq(m.llc_total_bytes, 0);
}

Test(topology, smt_two_pus_per_core) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_from_synthetic(&m,
                                        "pack:2 numa:2 l3:1(size=33554432) l2:4(size=1048576) "
                                        "l1d:1(size=32768) core:1 pu:2",
                                        0, &err),
                 0, "%s", err.msg);
    cr_expect_eq(m.packages, 2);
    cr_expect_eq(m.numa_nodes, 4);
    cr_expect_eq(m.cores, 16);
    cr_expect_eq(m.pus, 32);
    cr_expect_eq(m.threads, 16); /* one per core, not per PU */
    cr_expect_eq(m.l1d_bytes, 32 * KiB);
    cr_expect_eq(m.l1d_count, 16);
    cr_expect_eq(m.l2_bytes, 1 * MiB);
    cr_expect_eq(m.l3_bytes, 32 * MiB);
    cr_expect_eq(m.l3_count, 4);
    cr_expect_eq(m.llc_total_bytes, 128 * MiB);
}

Test(topology, no_l3) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(
        machine_from_synthetic(&m, "pack:1 l2:4(size=1048576) l1d:1(size=49152) core:1 pu:2", 0, &err), 0,
        "%s", err.msg);
    cr_expect_eq(m.cores, 4);
    cr_expect_eq(m.pus, 8);
    cr_expect_eq(m.l3_bytes, 0);
    cr_expect_eq(m.l3_count, 0);
    cr_expect_eq(m.l2_bytes, 1 * MiB);
    cr_expect_eq(m.l1d_bytes, 48 * KiB);
    cr_expect_eq(m.llc_level, 2);
    cr_expect_eq(m.llc_bytes, 1 * MiB);
    cr_expect_eq(m.llc_total_bytes, 4 * MiB);
}

Test(topology, bad_inputs) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_expect_neq(machine_from_synthetic(&m, "pack:two core:x", 0, &err), 0);
    cr_expect(strstr(err.msg, "hwloc_topology_set_synthetic"), "message: %s", err.msg);
    cr_expect_neq(machine_from_synthetic(&m, "", 0, &err), 0);
    cr_expect_neq(machine_from_synthetic(&m, "core:4 pu:1", 5, &err), 0);
    cr_expect(strstr(err.msg, "4 cores"), "message: %s", err.msg);
    cr_expect_neq(machine_from_synthetic(&m, "core:4 pu:1", -1, &err), 0);
}

Test(topology, live_machine_and_binding) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_detect(&m, 1, &err), 0, "%s", err.msg);
    cr_expect_geq(m.cores, 1);
    cr_expect_geq(m.pus, m.cores);
    cr_expect_geq(m.packages, 1);
    cr_expect_geq(m.numa_nodes, 1);
    cr_expect_gt(m.memory_bytes, 0);
    cr_expect_gt(strlen(m.cpu_model), 0);
    cr_expect_eq(m.threads, 1);
    cr_assert_eq(machine_bind_threads(&m, &err), 0, "%s", err.msg);
    cr_expect(strstr(m.binding, "hwloc_set_cpubind"), "binding: %s", m.binding);
    /* Asking for more threads than cores is refused. */
    m.threads = m.cores + 1;
    cr_expect_neq(machine_bind_threads(&m, &err), 0);
}

Test(topology, json_fields) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_from_synthetic(&m, "pack:1 l3:1(size=8388608) core:2 pu:2", 0, &err), 0, "%s",
                 err.msg);
    cJSON *o = cJSON_CreateObject();
    cr_assert_eq(machine_to_json(&m, o), 0);
    cr_expect_eq(cJSON_GetObjectItem(o, "cores")->valuedouble, 2);
    cr_expect_eq(cJSON_GetObjectItem(o, "pus")->valuedouble, 4);
    cr_expect_eq(cJSON_GetObjectItem(o, "numa_nodes")->valuedouble, 1);
    cJSON *caches = cJSON_GetObjectItem(o, "caches");
    cr_assert(caches);
    cr_expect_eq(cJSON_GetObjectItem(caches, "l3")->valuedouble, 8388608.0);
    cr_expect_eq(cJSON_GetObjectItem(caches, "l1d")->valuedouble, 0);
    cr_expect(cJSON_IsObject(cJSON_GetObjectItem(o, "isa")));
    cJSON_Delete(o);
}
