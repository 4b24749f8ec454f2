/* The C API's error paths and guarantees, as a C test program: it stops at
 * the first failed expectation, printing the test, the line, the call, the
 * status it got and the one expected, and exits 1; on success it prints the
 * number of checks and exits 0. Run under valgrind by .ci/capi.
 *
 * What it expects where ecs_runtime.h leaves a choice (the Rust side should
 * agree, or this file changes with the header):
 * - A NULL pointer gives ECS_ERR_NULL_POINTER, whether it is a function
 *   argument or a field of a desc struct (name, run, reads with
 *   reads_len > 0, a NULL name in before/after); a bad value (align,
 *   struct_size, threads) gives ECS_ERR_INVALID_ARGUMENT.
 * - A duplicate system name is refused by ecs_system_add
 *   (ECS_ERR_DUPLICATE_NAME), not by the build; an unknown component id in
 *   reads/writes is refused by ecs_system_add (ECS_ERR_UNKNOWN_COMPONENT); an
 *   unknown before/after name and a cycle are refused by ecs_engine_build
 *   (ECS_ERR_SCHEDULE), since names may refer to systems added later.
 * - ecs_component_lookup of an unknown name gives ECS_ERR_UNKNOWN_COMPONENT.
 * - A call made inside a system that fails returns its status to the
 *   callback; the tick itself then still succeeds (ECS_OK) or reports
 *   ECS_ERR_SYSTEM_FAILED: both are accepted here.
 * - A refused ecs_insert does not take the value: its drop is not called.
 * - After close, events already queued are still delivered; then pops give
 *   ECS_ERR_QUEUE_CLOSED. Closing through one handle closes the queue for
 *   all its clones.
 * - ecs_commands_spawn's handle is only relied on inside the same buffer
 *   (it may be a placeholder that apply remaps): entities spawned by
 *   commands are checked through counts, not through that handle.
 */
#define _POSIX_C_SOURCE 200809L
#define _POSIX_C_SOURCE 200809L

#include "check.h"

int main(int argc, char **argv) {
    /* `--no-huge-allocations`: skip the requests no allocator can give
     * (valgrind's allocator warns about them). */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-huge-allocations") == 0) {
            huge_allocations = 0;
        } else {
            fprintf(stderr, "errors: unknown argument `%s`\n", argv[i]);
            return 2;
        }
    }
    test_status_names();
    test_engine_arguments();
    test_ticks();
    test_components();
    test_entities();
    test_system_arguments();
    test_schedule_errors();
    test_inside_systems();
    test_commands();
    test_drops();
    test_reentrant_drops();
    test_two_engines();
    test_queue_errors();
    test_queue_threads();
    test_bad_inputs();
    test_hierarchy();
    test_resources();
    test_snapshots();
    test_events();
    test_changes();
    test_exclusive();
    printf("errors: all %lu checks passed\n", atomic_load(&checks));
    return 0;
}
