/* Change detection from C (issue 30, API 2.6): a component registered with
 * ECS_COMPONENT_TRACK_CHANGES, a system that writes it through a view, a watcher whose
 * ecs_view_desc lists `changed`, `added` and `optional` ids, removals read
 * with ecs_ctx_removed, and the refusals (an untracked component, a run
 * condition), and exclusive systems (API 2.6), whose body changes the
 * world at once. */
#define _POSIX_C_SOURCE 200809L

#include <string.h>

#include "check.h"

typedef struct Watch {
    ecs_component_id hp, shield;
    int heal; /* the healer runs only while set */
    size_t added, changed, removed, shielded;
    Seen view, removals, untracked, in_condition;
} Watch;

static void heal(ecs_entity entity, void *const *components, void *user_data) {
    (void)entity;
    (void)user_data;
    *(int *)components[0] += 1;
}

static void healer(ecs_system_ctx *ctx, void *user_data) {
    Watch *w = user_data;
    if (w->heal) {
        EXPECT_OK(ecs_view_each(ctx, &w->hp, 1, heal, NULL));
    }
}

static void count(ecs_entity entity, void *const *components, void *user_data) {
    (void)entity;
    size_t *counts = user_data; /* [0]: visits, [1]: with a shield */
    counts[0] += 1;
    counts[1] += components[1] != NULL;
}

static void count_removed(ecs_entity entity, void *user_data) {
    (void)entity;
    *(size_t *)user_data += 1;
}

static size_t visits(ecs_system_ctx *ctx, Watch *w, int added, Seen *status) {
    ecs_view_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    desc.ids = &w->hp;
    desc.ids_len = 1;
    desc.optional = &w->shield;
    desc.optional_len = 1;
    if (added) {
        desc.added = &w->hp;
        desc.added_len = 1;
    } else {
        desc.changed = &w->hp;
        desc.changed_len = 1;
    }
    size_t counts[2] = {0, 0};
    *status = seen(ecs_view_each_filtered(ctx, &desc, count, counts));
    w->shielded = counts[1];
    return counts[0];
}

static void watcher(ecs_system_ctx *ctx, void *user_data) {
    Watch *w = user_data;
    w->added = visits(ctx, w, 1, &w->view);
    w->changed = visits(ctx, w, 0, &w->view);
    w->removed = 0;
    uint64_t missed = 1;
    w->removals = seen(ecs_ctx_removed(ctx, w->hp, count_removed, &w->removed, &missed));
    EXPECT_EQ_U64(0, missed);
    w->untracked = seen(ecs_ctx_removed(ctx, w->shield, count_removed, &w->removed, NULL));
}

static bool condition(const ecs_system_ctx *ctx, void *user_data) {
    Watch *w = user_data;
    size_t removed = 0;
    w->in_condition = seen(ecs_ctx_removed((ecs_system_ctx *)ctx, w->hp, count_removed, &removed, NULL));
    return true;
}

void test_changes(void) {
    current_test = "change detection";
    ecs_engine *engine = new_engine(2);
    Watch w;
    memset(&w, 0, sizeof w);
    ecs_component_desc hp = component_desc("Hp", sizeof(int), _Alignof(int));
    hp.flags = ECS_COMPONENT_TRACK_CHANGES;
    EXPECT_OK(ecs_component_register(engine, &hp, &w.hp));
    w.shield = new_component(engine, "Shield", sizeof(int), _Alignof(int));
    ecs_system_desc heal_desc = system_desc("healer", healer, &w);
    heal_desc.writes = &w.hp;
    heal_desc.writes_len = 1;
    EXPECT_OK(ecs_system_add(engine, &heal_desc));
    ecs_component_id reads[2] = {w.hp, w.shield};
    ecs_system_desc watch_desc = system_desc("watcher", watcher, &w);
    watch_desc.reads = reads;
    watch_desc.reads_len = 2;
    watch_desc.run_if = condition;
    watch_desc.run_if_user_data = &w;
    EXPECT_OK(ecs_system_add(engine, &watch_desc));
    ecs_entity es[3];
    int value = 10;
    for (int i = 0; i < 3; i++) {
        EXPECT_OK(ecs_spawn(engine, &es[i]));
        EXPECT_OK(ecs_insert(engine, es[i], w.hp, &value));
    }
    EXPECT_OK(ecs_insert(engine, es[0], w.shield, &value));

    EXPECT_OK(ecs_engine_tick(engine)); /* first run: everything is new */
    EXPECT_SEEN(ECS_OK, w.view);
    EXPECT_SEEN(ECS_OK, w.removals);
    EXPECT_SEEN(ECS_ERR_INVALID_ARGUMENT, w.untracked);
    EXPECT_SEEN(ECS_ERR_WRONG_STATE, w.in_condition);
    EXPECT_EQ_U64(3, w.added);
    EXPECT_EQ_U64(3, w.changed);
    EXPECT_EQ_U64(1, w.shielded);

    EXPECT_OK(ecs_engine_tick(engine)); /* nothing happened since */
    EXPECT_EQ_U64(0, w.added);
    EXPECT_EQ_U64(0, w.changed);

    w.heal = 1; /* the healer's view marks every value it visits */
    EXPECT_OK(ecs_remove(engine, es[1], w.hp));
    EXPECT_OK(ecs_engine_tick(engine));
    EXPECT_EQ_U64(0, w.added);
    EXPECT_EQ_U64(2, w.changed);
    EXPECT_EQ_U64(1, w.removed);
    int *hp_value = NULL;
    EXPECT_OK(ecs_get(engine, es[0], w.hp, (void **)&hp_value));
    EXPECT(*hp_value == 11);
    ecs_engine_destroy(engine);
}

/* ---- exclusive systems ------------------------------------------------------- */

typedef struct Director {
    ecs_engine *engine;
    ecs_component_id hp;
    size_t ticks;
    Seen refused_tick, spawned;
} Director;

static void direct(ecs_engine *engine, const ecs_tick *tick, void *user_data) {
    Director *d = user_data;
    EXPECT_EQ_U64(d->ticks, tick->number);
    d->ticks += 1;
    ecs_entity e = 0;
    d->spawned = seen(ecs_spawn(engine, &e));
    int value = 7;
    EXPECT_OK(ecs_insert(engine, e, d->hp, &value));
    bool has = false;
    EXPECT_OK(ecs_has(engine, e, d->hp, &has));
    EXPECT(has);
    d->refused_tick = seen(ecs_engine_tick(engine));
}

void test_exclusive(void) {
    current_test = "exclusive systems";
    Director d;
    memset(&d, 0, sizeof d);
    d.engine = new_engine(2);
    d.hp = new_component(d.engine, "Hp", sizeof(int), _Alignof(int));
    ecs_system_desc desc = system_desc("director", NULL, &d);
    desc.run_exclusive = direct;
    EXPECT_OK(ecs_system_add(d.engine, &desc));
    ecs_system_desc both = system_desc("both", do_nothing, &d);
    both.run_exclusive = direct;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_system_add(d.engine, &both));
    EXPECT_OK(ecs_engine_tick(d.engine));
    EXPECT_OK(ecs_engine_tick(d.engine));
    EXPECT_EQ_U64(2, d.ticks);
    EXPECT_SEEN(ECS_OK, d.spawned);
    EXPECT_SEEN(ECS_ERR_WRONG_STATE, d.refused_tick);
    size_t count = 0;
    EXPECT_OK(ecs_entity_count(d.engine, &count));
    EXPECT_EQ_U64(2, count);
    ecs_engine_destroy(d.engine);
}
