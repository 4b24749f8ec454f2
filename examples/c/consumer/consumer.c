/* Links ecs_runtime::ecs_runtime from C: spawns three entities with a
 * counter, runs a system that adds 1 to each per tick for 10 ticks, and
 * checks the total. Prints `consumer_c: ok` and exits 0, or says what failed. */
#include <stdint.h>
#include <stdio.h>
#include "ecs_runtime.h"

static void add_one(ecs_entity entity, void *const *components, void *user_data) {
    (void)entity;
    (void)user_data;
    *(uint32_t *)components[0] += 1;
}

static void count(ecs_system_ctx *ctx, void *user_data) {
    ecs_component_id counter = *(const ecs_component_id *)user_data;
    ecs_view_each(ctx, &counter, 1, add_one, NULL);
}

static int failed(const char *call, ecs_status status) {
    fprintf(stderr, "consumer_c: %s: %s: %s\n", call, ecs_status_name(status),
            ecs_last_error_message());
    return 1;
}

#define CHECK(call)                                                                            \
    do {                                                                                       \
        ecs_status status_ = (call);                                                           \
        if (status_ != ECS_OK) return failed(#call, status_);                                 \
    } while (0)

static int run(ecs_engine *engine) {
    ecs_component_id counter;
    ecs_component_desc desc = {.struct_size = sizeof desc, .name = "Counter",
                               .size = sizeof(uint32_t), .align = _Alignof(uint32_t)};
    CHECK(ecs_component_register(engine, &desc, &counter));
    ecs_entity entities[3];
    for (uint32_t i = 0; i < 3; i++) {
        uint32_t start = 100 * i;
        CHECK(ecs_spawn(engine, &entities[i]));
        CHECK(ecs_insert(engine, entities[i], counter, &start));
    }
    ecs_system_desc sys = {.struct_size = sizeof sys, .name = "count", .run = count,
                           .user_data = &counter, .writes = &counter, .writes_len = 1};
    CHECK(ecs_system_add(engine, &sys));
    CHECK(ecs_engine_run(engine, 10));

    uint32_t total = 0;
    for (int i = 0; i < 3; i++) {
        void *value;
        CHECK(ecs_get(engine, entities[i], counter, &value));
        total += *(const uint32_t *)value;
    }
    if (total != 0 + 100 + 200 + 3 * 10) {
        fprintf(stderr, "consumer_c: total %u, want 330\n", (unsigned)total);
        return 1;
    }
    return 0;
}

int main(void) {
    ecs_engine *engine = NULL;
    ecs_engine_desc desc = {.struct_size = sizeof desc, .threads = 2, .step_seconds = 1.0 / 60.0};
    CHECK(ecs_engine_create(&desc, &engine));
    int code = run(engine);
    ecs_engine_destroy(engine);
    if (code == 0) printf("consumer_c: ok\n");
    return code;
}
