/* The C API's error paths: system declarations and the schedule, inside systems, command buffers. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

/* ---- systems: declarations, names, the schedule ------------------------------- */

void test_system_arguments(void) {
    current_test = "system arguments and names";
    ecs_engine *engine = new_engine(2);
    ecs_component_id point = new_component(engine, "Point", sizeof(Point), _Alignof(Point));
    ecs_system_desc desc = system_desc("first", do_nothing, NULL);

    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_system_add(NULL, &desc));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_system_add(engine, NULL));
    ecs_system_desc bad = desc;
    bad.struct_size = 0;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_system_add(engine, &bad));
    bad.struct_size = sizeof(uint32_t);
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_system_add(engine, &bad));
    bad = desc;
    bad.name = NULL;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_system_add(engine, &bad));
    bad = desc;
    bad.run = NULL;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_system_add(engine, &bad));
    bad = desc;
    bad.reads = NULL;
    bad.reads_len = 1;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_system_add(engine, &bad));
    bad = desc;
    const ecs_component_id bogus = BOGUS_ID;
    bad.writes = &bogus;
    bad.writes_len = 1;
    EXPECT_STATUS(ECS_ERR_UNKNOWN_COMPONENT, ecs_system_add(engine, &bad));

    desc.reads = &point;
    desc.reads_len = 1;
    EXPECT_OK(ecs_system_add(engine, &desc));
    ecs_system_desc same_name = system_desc("first", do_nothing, NULL);
    EXPECT_STATUS(ECS_ERR_DUPLICATE_NAME, ecs_system_add(engine, &same_name));
    /* The name is copied. */
    char name[16] = "second";
    ecs_system_desc copied = system_desc(name, do_nothing, NULL);
    EXPECT_OK(ecs_system_add(engine, &copied));
    strcpy(name, "renamed");
    ecs_system_desc again = system_desc("second", do_nothing, NULL);
    EXPECT_STATUS(ECS_ERR_DUPLICATE_NAME, ecs_system_add(engine, &again));

    EXPECT_OK(ecs_engine_build(engine));
    ecs_system_desc late = system_desc("late", do_nothing, NULL);
    EXPECT_STATUS(ECS_ERR_WRONG_STATE, ecs_system_add(engine, &late));
    EXPECT_OK(ecs_engine_tick(engine));
    EXPECT_STATUS(ECS_ERR_WRONG_STATE, ecs_system_add(engine, &late));
    ecs_engine_destroy(engine);

    /* The first tick builds the schedule: adding after it is refused too. */
    engine = new_engine(1);
    EXPECT_OK(ecs_engine_tick(engine));
    EXPECT_STATUS(ECS_ERR_WRONG_STATE, ecs_system_add(engine, &late));
    ecs_engine_destroy(engine);
}

void test_schedule_errors(void) {
    current_test = "schedule errors";
    /* A before/after cycle: cycle_a before cycle_b, cycle_b before cycle_a. */
    ecs_engine *engine = new_engine(2);
    const char *before_b[] = {"cycle_b"};
    const char *before_a[] = {"cycle_a"};
    ecs_system_desc a = system_desc("cycle_a", do_nothing, NULL);
    a.before = before_b;
    a.before_len = 1;
    ecs_system_desc b = system_desc("cycle_b", do_nothing, NULL);
    b.before = before_a;
    b.before_len = 1;
    EXPECT_OK(ecs_system_add(engine, &a));
    EXPECT_OK(ecs_system_add(engine, &b));
    EXPECT_STATUS(ECS_ERR_SCHEDULE, ecs_engine_build(engine));
    {
        const char *message = ecs_last_error_message();
        checks++;
        if (strstr(message, "cycle_a") == NULL || strstr(message, "cycle_b") == NULL) {
            fail(__FILE__, __LINE__, "the cycle's message does not name both systems: \"%s\"",
                 message);
        }
    }
    ecs_engine_destroy(engine);

    /* The same cycle through `after`; ticking builds: the same error, and the
     * engine can still be destroyed. */
    engine = new_engine(1);
    const char *after_b[] = {"cycle_b"};
    const char *after_a[] = {"cycle_a"};
    a = system_desc("cycle_a", do_nothing, NULL);
    a.after = after_b;
    a.after_len = 1;
    b = system_desc("cycle_b", do_nothing, NULL);
    b.after = after_a;
    b.after_len = 1;
    EXPECT_OK(ecs_system_add(engine, &a));
    EXPECT_OK(ecs_system_add(engine, &b));
    EXPECT_STATUS(ECS_ERR_SCHEDULE, ecs_engine_tick(engine));
    ecs_engine_destroy(engine);

    /* An unknown name in before/after. */
    engine = new_engine(1);
    const char *ghost[] = {"ghost"};
    ecs_system_desc lonely = system_desc("lonely", do_nothing, NULL);
    lonely.after = ghost;
    lonely.after_len = 1;
    EXPECT_OK(ecs_system_add(engine, &lonely));
    EXPECT_STATUS(ECS_ERR_SCHEDULE, ecs_engine_build(engine));
    ecs_engine_destroy(engine);

    /* NULL names in the lists. */
    engine = new_engine(1);
    ecs_system_desc null_list = system_desc("null_list", do_nothing, NULL);
    null_list.before = NULL;
    null_list.before_len = 1;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_system_add(engine, &null_list));
    const char *null_name[] = {NULL};
    null_list.before = null_name;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_system_add(engine, &null_list));
    ecs_engine_destroy(engine);
}

/* ---- inside a system: undeclared access, NULL arguments, stale entities ------- */

typedef struct Probe {
    ecs_component_id declared;   /* read */
    ecs_component_id undeclared; /* registered, not declared */
    ecs_entity entity;           /* has both */
    ecs_entity stale;
    int ran;
    int declared_value_ok;
    int visited;
    int alive, stale_alive;
    Seen tick_ok, get_declared, get_undeclared, get_stale, view_undeclared, chunk_undeclared,
        view_declared, commands, tick_null, get_null, view_null_fn, view_null_ids, chunk_null_fn,
        commands_null;
} Probe;

static void count_visit(ecs_entity entity, void *const *components, void *user_data) {
    (void)entity;
    (void)components;
    ((Probe *)user_data)->visited++;
}

static void count_chunk(const ecs_view_chunk *chunk, void *user_data) {
    (void)chunk;
    (void)user_data;
}

static void probe_system(ecs_system_ctx *ctx, void *user_data) {
    Probe *probe = (Probe *)user_data;
    probe->ran++;
    ecs_tick tick;
    void *ptr = NULL;
    ecs_commands *commands = NULL;
    probe->tick_ok = seen(ecs_ctx_tick(ctx, &tick));
    probe->get_declared = seen(ecs_ctx_get(ctx, probe->entity, probe->declared, &ptr));
    probe->declared_value_ok = ptr != NULL && ((Point *)ptr)->x == 3.0f;
    probe->get_undeclared = seen(ecs_ctx_get(ctx, probe->entity, probe->undeclared, &ptr));
    probe->get_stale = seen(ecs_ctx_get(ctx, probe->stale, probe->declared, &ptr));
    probe->view_undeclared =
        seen(ecs_view_each(ctx, &probe->undeclared, 1, count_visit, probe));
    const ecs_component_id both[2] = {probe->declared, probe->undeclared};
    probe->chunk_undeclared = seen(ecs_view_each_chunk(ctx, both, 2, count_chunk, probe));
    probe->view_declared = seen(ecs_view_each(ctx, &probe->declared, 1, count_visit, probe));
    probe->commands = seen(ecs_ctx_commands(ctx, &commands));
    probe->alive = ecs_ctx_is_alive(ctx, probe->entity);
    probe->stale_alive = ecs_ctx_is_alive(ctx, probe->stale);
    probe->tick_null = seen(ecs_ctx_tick(ctx, NULL));
    probe->get_null = seen(ecs_ctx_get(ctx, probe->entity, probe->declared, NULL));
    probe->view_null_fn = seen(ecs_view_each(ctx, &probe->declared, 1, NULL, probe));
    probe->view_null_ids = seen(ecs_view_each(ctx, NULL, 1, count_visit, probe));
    probe->chunk_null_fn = seen(ecs_view_each_chunk(ctx, &probe->declared, 1, NULL, probe));
    probe->commands_null = seen(ecs_ctx_commands(ctx, NULL));
}

void test_inside_systems(void) {
    current_test = "inside a system";
    ecs_engine *engine = new_engine(2);
    Probe probe;
    memset(&probe, 0, sizeof probe);
    probe.declared = new_component(engine, "Declared", sizeof(Point), _Alignof(Point));
    probe.undeclared = new_component(engine, "Undeclared", sizeof(Point), _Alignof(Point));
    const Point p = {3.0f, 4.0f};
    EXPECT_OK(ecs_spawn(engine, &probe.stale));
    EXPECT_OK(ecs_spawn(engine, &probe.entity));
    EXPECT_OK(ecs_insert(engine, probe.entity, probe.declared, &p));
    EXPECT_OK(ecs_insert(engine, probe.entity, probe.undeclared, &p));
    EXPECT_OK(ecs_despawn(engine, probe.stale));

    ecs_system_desc desc = system_desc("probe", probe_system, &probe);
    desc.reads = &probe.declared;
    desc.reads_len = 1;
    EXPECT_OK(ecs_system_add(engine, &desc));
    EXPECT_EITHER(ECS_OK, ECS_ERR_SYSTEM_FAILED, ecs_engine_tick(engine));

    EXPECT(probe.ran == 1);
    EXPECT_SEEN(ECS_OK, probe.tick_ok);
    EXPECT_SEEN(ECS_OK, probe.get_declared);
    EXPECT(probe.declared_value_ok);
    EXPECT_SEEN(ECS_ERR_UNDECLARED, probe.get_undeclared);
    EXPECT_SEEN(ECS_ERR_STALE_ENTITY, probe.get_stale);
    EXPECT_SEEN(ECS_ERR_UNDECLARED, probe.view_undeclared);
    EXPECT_SEEN(ECS_ERR_UNDECLARED, probe.chunk_undeclared);
    EXPECT_SEEN(ECS_OK, probe.view_declared);
    EXPECT(probe.visited == 1); /* only the declared view visited, once */
    EXPECT_SEEN(ECS_ERR_UNDECLARED, probe.commands);
    EXPECT(probe.alive && !probe.stale_alive);
    EXPECT_SEEN(ECS_ERR_NULL_POINTER, probe.tick_null);
    EXPECT_SEEN(ECS_ERR_NULL_POINTER, probe.get_null);
    EXPECT_SEEN(ECS_ERR_NULL_POINTER, probe.view_null_fn);
    EXPECT_SEEN(ECS_ERR_NULL_POINTER, probe.view_null_ids);
    EXPECT_SEEN(ECS_ERR_NULL_POINTER, probe.chunk_null_fn);
    EXPECT_SEEN(ECS_ERR_NULL_POINTER, probe.commands_null);

    /* The engine is still usable. */
    EXPECT_EITHER(ECS_OK, ECS_ERR_SYSTEM_FAILED, ecs_engine_tick(engine));
    EXPECT(probe.ran == 2);
    ecs_engine_destroy(engine);

    /* Outside a system, a NULL context or buffer is refused. */
    ecs_tick tick;
    void *ptr = NULL;
    ecs_commands *commands = NULL;
    ecs_entity e = 0;
    const Point q = {0.0f, 0.0f};
    const ecs_component_id ids[1] = {0};
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_ctx_tick(NULL, &tick));
    EXPECT(!ecs_ctx_is_alive(NULL, 1));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_ctx_get(NULL, 1, 0, &ptr));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_view_each(NULL, ids, 1, count_visit, NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_view_each_chunk(NULL, ids, 1, count_chunk, NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_ctx_commands(NULL, &commands));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_commands_spawn(NULL, &e));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_commands_despawn(NULL, 1));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_commands_insert(NULL, 1, 0, &q));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_commands_remove(NULL, 1, 0));
}

/* ---- command buffers ------------------------------------------------------------ */

typedef struct Commander {
    ecs_component_id point;
    ecs_entity victim;
    Seen commands, spawn, insert, despawn, spawn_null, insert_null, insert_unknown;
} Commander;

static void commander_system(ecs_system_ctx *ctx, void *user_data) {
    Commander *c = (Commander *)user_data;
    ecs_commands *commands = NULL;
    c->commands = seen(ecs_ctx_commands(ctx, &commands));
    if (c->commands.status != ECS_OK) {
        return;
    }
    ecs_entity e = ECS_ENTITY_NULL;
    const Point p = {42.0f, 43.0f};
    c->spawn = seen(ecs_commands_spawn(commands, &e));
    c->insert = seen(ecs_commands_insert(commands, e, c->point, &p)); /* usable at once */
    c->despawn = seen(ecs_commands_despawn(commands, c->victim));
    c->spawn_null = seen(ecs_commands_spawn(commands, NULL));
    c->insert_null = seen(ecs_commands_insert(commands, e, c->point, NULL));
    c->insert_unknown = seen(ecs_commands_insert(commands, e, BOGUS_ID, &p));
    c->victim = ECS_ENTITY_NULL;
}

void test_commands(void) {
    current_test = "command buffers";
    ecs_engine *engine = new_engine(2);
    Commander c;
    memset(&c, 0, sizeof c);
    c.point = new_component(engine, "Point", sizeof(Point), _Alignof(Point));
    EXPECT_OK(ecs_spawn(engine, &c.victim));
    ecs_entity victim = c.victim;
    ecs_system_desc desc = system_desc("commander", commander_system, &c);
    desc.commands = true;
    EXPECT_OK(ecs_system_add(engine, &desc));
    EXPECT_OK(ecs_engine_tick(engine));
    EXPECT_SEEN(ECS_OK, c.commands);
    EXPECT_SEEN(ECS_OK, c.spawn);
    EXPECT_SEEN(ECS_OK, c.insert);
    EXPECT_SEEN(ECS_OK, c.despawn);
    EXPECT_SEEN(ECS_ERR_NULL_POINTER, c.spawn_null);
    EXPECT_SEEN(ECS_ERR_NULL_POINTER, c.insert_null);
    EXPECT_SEEN(ECS_ERR_UNKNOWN_COMPONENT, c.insert_unknown);
    /* Applied after the wave: the victim is gone, one entity with a Point. */
    EXPECT(!ecs_is_alive(engine, victim));
    size_t count = 0;
    EXPECT_OK(ecs_entity_count(engine, &count));
    EXPECT_EQ_U64(1, count);
    ecs_engine_destroy(engine);
}
