/* Events between C systems (issue 30): a channel of `Hit` events, two
 * shooters sending and a scorer reading on 4 threads. The scorer is added
 * first and still runs after the shooters (a writer of a channel runs
 * before its readers), sees every tick's hits in the order the shooters
 * were added, reads events sent between ticks once, and every bad call
 * returns a status and sends nothing. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

typedef struct Hit {
    uint32_t target;
    float damage;
} Hit;

typedef struct Game {
    ecs_event_id hits;
    uint64_t tick;
    /* Per tick, the targets the scorer saw, in order (up to 8 a tick). */
    uint32_t seen[16][8];
    size_t seen_len[16];
    size_t runs;
    double total;
    Seen undeclared_send;
    Seen undeclared_read;
    Seen wrong_size;
} Game;

static void shoot(ecs_system_ctx *ctx, Game *game, uint32_t first, uint32_t count) {
    for (uint32_t k = 0; k < count; k++) {
        Hit hit = {first + k, 1.5f};
        if (ecs_ctx_send_event(ctx, game->hits, &hit, sizeof hit) != ECS_OK) {
            fail(__FILE__, __LINE__, "ecs_ctx_send_event: %s", ecs_last_error_message());
        }
    }
}

static void left_gun(ecs_system_ctx *ctx, void *user_data) {
    Game *game = user_data;
    shoot(ctx, game, (uint32_t)game->tick * 100 + 1, 2);
}

static void right_gun(ecs_system_ctx *ctx, void *user_data) {
    Game *game = user_data;
    shoot(ctx, game, (uint32_t)game->tick * 100 + 50, 1);
    Hit hit = {0, 0.0f};
    game->wrong_size = seen(ecs_ctx_send_event(ctx, game->hits, &hit, sizeof hit - 1));
}

static void count_hit(const void *event, void *user_data) {
    Game *game = user_data;
    const Hit *hit = event;
    size_t run = game->runs;
    if (run < 16 && game->seen_len[run] < 8) {
        game->seen[run][game->seen_len[run]++] = hit->target;
    }
    game->total += hit->damage;
}

static void score(ecs_system_ctx *ctx, void *user_data) {
    Game *game = user_data;
    ecs_events_read counts = {0, 0};
    if (ecs_ctx_read_events(ctx, game->hits, count_hit, game, &counts) != ECS_OK) {
        fail(__FILE__, __LINE__, "ecs_ctx_read_events: %s", ecs_last_error_message());
    }
    if (counts.read != game->seen_len[game->runs < 16 ? game->runs : 15] || counts.missed != 0) {
        fail(__FILE__, __LINE__, "read %" PRIu64 " missed %" PRIu64, counts.read, counts.missed);
    }
    game->runs++;
}

static void sneaky(ecs_system_ctx *ctx, void *user_data) {
    Game *game = user_data;
    Hit hit = {9, 9.0f};
    game->undeclared_send = seen(ecs_ctx_send_event(ctx, game->hits, &hit, sizeof hit));
    game->undeclared_read = seen(ecs_ctx_read_events(ctx, game->hits, count_hit, game, NULL));
}

static ecs_event_desc event_desc(const char *name, size_t size, size_t align) {
    ecs_event_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    desc.name = name;
    desc.size = size;
    desc.align = align;
    return desc;
}

static void test_event_calls(void) {
    current_test = "event channels between ticks";
    ecs_engine *engine = new_engine(2);
    ecs_engine *other = new_engine(1);
    ecs_event_desc desc = event_desc("hit", sizeof(Hit), _Alignof(Hit));
    ecs_event_id hits = 0, foreign = 0, id = 0;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_event_register(NULL, &desc, &hits));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_event_register(engine, NULL, &hits));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_event_register(engine, &desc, NULL));
    ecs_event_desc bad = desc;
    bad.struct_size = 4;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_event_register(engine, &bad, &id));
    bad = desc;
    bad.align = 32;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_event_register(engine, &bad, &id));
    bad = desc;
    bad.name = "";
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_event_register(engine, &bad, &id));
    EXPECT_OK(ecs_event_register(engine, &desc, &hits));
    EXPECT_STATUS(ECS_ERR_DUPLICATE_NAME, ecs_event_register(engine, &desc, &id));
    EXPECT_OK(ecs_event_register(other, &desc, &foreign));
    EXPECT_OK(ecs_event_lookup(engine, "hit", &id));
    EXPECT_EQ_U64(hits, id);
    EXPECT_STATUS(ECS_ERR_UNKNOWN_EVENT, ecs_event_lookup(engine, "miss", &id));

    Hit hit = {1, 2.0f};
    EXPECT_STATUS(ECS_ERR_UNKNOWN_EVENT, ecs_event_send(engine, foreign, &hit, sizeof hit));
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_event_send(engine, hits, &hit, 4));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_event_send(engine, hits, NULL, sizeof hit));
    ecs_event_stats stats;
    EXPECT_OK(ecs_event_get_stats(engine, hits, &stats));
    EXPECT_EQ_U64(0, stats.sent);
    EXPECT_OK(ecs_event_send(engine, hits, &hit, sizeof hit));
    EXPECT_OK(ecs_event_get_stats(engine, hits, &stats));
    EXPECT_EQ_U64(1, stats.sent);
    EXPECT_EQ_U64(1, stats.retained);
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_event_get_stats(engine, hits, NULL));
    /* No system reads the channel: after 8 ticks the event is dropped and
     * counted missed, never silently lost. */
    EXPECT_OK(ecs_engine_run(engine, 9));
    EXPECT_OK(ecs_event_get_stats(engine, hits, &stats));
    EXPECT_EQ_U64(0, stats.retained);
    EXPECT_EQ_U64(1, stats.missed);
    ecs_engine_destroy(other);
    ecs_engine_destroy(engine);
}

static void test_event_systems(void) {
    current_test = "events between systems";
    ecs_engine *engine = new_engine(4);
    static Game game;
    memset(&game, 0, sizeof game);
    ecs_event_desc desc = event_desc("hit", sizeof(Hit), _Alignof(Hit));
    EXPECT_OK(ecs_event_register(engine, &desc, &game.hits));

    ecs_system_desc scorer = system_desc("score", score, &game);
    scorer.event_reads = &game.hits;
    scorer.event_reads_len = 1;
    EXPECT_OK(ecs_system_add(engine, &scorer));
    ecs_system_desc left = system_desc("left", left_gun, &game);
    left.event_writes = &game.hits;
    left.event_writes_len = 1;
    EXPECT_OK(ecs_system_add(engine, &left));
    ecs_system_desc right = system_desc("right", right_gun, &game);
    right.event_writes = &game.hits;
    right.event_writes_len = 1;
    EXPECT_OK(ecs_system_add(engine, &right));
    ecs_system_desc cheat = system_desc("sneaky", sneaky, &game);
    EXPECT_OK(ecs_system_add(engine, &cheat));
    ecs_event_id bogus = 0x7FFFFFF0u;
    ecs_system_desc unknown = system_desc("unknown", do_nothing, NULL);
    unknown.event_writes = &bogus;
    unknown.event_writes_len = 1;
    EXPECT_STATUS(ECS_ERR_UNKNOWN_EVENT, ecs_system_add(engine, &unknown));
    unknown.event_writes = NULL;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_system_add(engine, &unknown));

    Hit early = {7, 1.0f};
    EXPECT_OK(ecs_event_send(engine, game.hits, &early, sizeof early));
    for (uint64_t t = 0; t < 3; t++) {
        game.tick = t;
        EXPECT_OK(ecs_engine_tick(engine));
    }
    EXPECT_EQ_U64(3, game.runs);
    /* Tick 0: the event sent before it, then left's two, then right's. */
    EXPECT_EQ_U64(4, game.seen_len[0]);
    EXPECT_EQ_U64(7, game.seen[0][0]);
    EXPECT_EQ_U64(1, game.seen[0][1]);
    EXPECT_EQ_U64(2, game.seen[0][2]);
    EXPECT_EQ_U64(50, game.seen[0][3]);
    for (size_t t = 1; t < 3; t++) {
        EXPECT_EQ_U64(3, game.seen_len[t]);
        EXPECT_EQ_U64(t * 100 + 1, game.seen[t][0]);
        EXPECT_EQ_U64(t * 100 + 2, game.seen[t][1]);
        EXPECT_EQ_U64(t * 100 + 50, game.seen[t][2]);
    }
    EXPECT(game.total == 1.0 + 9 * 1.5);
    EXPECT_SEEN(ECS_ERR_UNDECLARED, game.undeclared_send);
    EXPECT_SEEN(ECS_ERR_UNDECLARED, game.undeclared_read);
    EXPECT_SEEN(ECS_ERR_INVALID_ARGUMENT, game.wrong_size);
    ecs_event_stats stats;
    EXPECT_OK(ecs_event_get_stats(engine, game.hits, &stats));
    EXPECT_EQ_U64(10, stats.sent);
    EXPECT_EQ_U64(0, stats.missed);
    ecs_engine_destroy(engine);
}

void test_events(void) {
    test_event_calls();
    test_event_systems();
}
