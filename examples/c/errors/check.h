/* The C API's error-path tests (examples/c/errors/): the checking
 * machinery and helpers every group of tests shares, and the groups' entry
 * points, called in order by main.c. */
#ifndef ECS_ERRORS_CHECK_H
#define ECS_ERRORS_CHECK_H

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ecs_runtime.h"

/* The test running now (named in a failure) and the checks passed (atomic:
 * systems check from the worker threads, several at once). */
extern const char *current_test;
extern _Atomic unsigned long checks;
/* 0 with `--no-huge-allocations` (valgrind): skip the requests no
 * allocator can give. */
extern int huge_allocations;

/* A status seen inside a system callback (on a worker thread), with the
 * message copied there: the message is per thread. */
typedef struct Seen {
    ecs_status status;
    int has_message;
} Seen;

_Noreturn void fail(const char *file, int line, const char *format, ...);
const char *name_of(ecs_status status);
void expect_message(const char *file, int line, const char *text);
void expect_status(const char *file, int line, const char *text, ecs_status got, ecs_status want);
void expect_either(const char *file, int line, const char *text, ecs_status got, ecs_status a, ecs_status b);
Seen seen(ecs_status status);
void expect_seen(const char *file, int line, const char *what, Seen s, ecs_status want);
ecs_engine *new_engine(uint32_t threads);
ecs_component_desc component_desc(const char *name, size_t size, size_t align);
ecs_component_id new_component(ecs_engine *engine, const char *name, size_t size, size_t align);
ecs_system_desc system_desc(const char *name, ecs_system_fn run, void *user_data);
void do_nothing(ecs_system_ctx *ctx, void *user_data);
double now_ms(void);

#define EXPECT_STATUS(want, call) expect_status(__FILE__, __LINE__, #call, (call), (want))
#define EXPECT_OK(call) EXPECT_STATUS(ECS_OK, call)
#define EXPECT_EITHER(a, b, call) expect_either(__FILE__, __LINE__, #call, (call), (a), (b))
#define EXPECT(condition)                                                        \
    do {                                                                         \
        checks++;                                                                \
        if (!(condition)) {                                                      \
            fail(__FILE__, __LINE__, "expected %s", #condition);                 \
        }                                                                        \
    } while (0)
#define EXPECT_EQ_U64(want, got)                                                             \
    do {                                                                                     \
        checks++;                                                                            \
        uint64_t want_ = (uint64_t)(want), got_ = (uint64_t)(got);                           \
        if (want_ != got_) {                                                                 \
            fail(__FILE__, __LINE__, "%s is %" PRIu64 ", expected %" PRIu64, #got, got_,     \
                 want_);                                                                     \
        }                                                                                    \
    } while (0)

#define EXPECT_SEEN(want, seen_value) expect_seen(__FILE__, __LINE__, #seen_value, seen_value, want)

typedef struct Point {
    float x, y;
} Point;

/* An id no engine in this program registers. */
#define BOGUS_ID ((ecs_component_id)0x7FFFFFF0u)

void test_status_names(void);
void test_engine_arguments(void);
void test_ticks(void);
void test_components(void);
void test_entities(void);
void test_system_arguments(void);
void test_schedule_errors(void);
void test_inside_systems(void);
void test_commands(void);
void test_drops(void);
void test_reentrant_drops(void);
void test_two_engines(void);
void test_queue_errors(void);
void test_queue_threads(void);
void test_bad_inputs(void);
void test_hierarchy(void);
void test_resources(void);
void test_snapshots(void);
void test_events(void);
void test_changes(void);
void test_exclusive(void);

#endif /* ECS_ERRORS_CHECK_H */
