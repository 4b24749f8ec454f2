/* The C API's error paths: event queues, from one thread and from several. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

/* ---- event queues ---------------------------------------------------------------- */

static ecs_queue *new_queue(size_t event_size, size_t capacity) {
    ecs_queue_desc desc = {.struct_size = sizeof desc, .event_size = event_size,
                           .capacity = capacity};
    ecs_queue *queue = NULL;
    EXPECT_OK(ecs_queue_create(&desc, &queue));
    EXPECT(queue != NULL);
    return queue;
}

void test_queue_errors(void) {
    current_test = "queue errors";
    ecs_queue_desc desc = {.struct_size = sizeof desc, .event_size = 8, .capacity = 2};
    ecs_queue *queue = NULL;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_create(NULL, &queue));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_create(&desc, NULL));
    ecs_queue_desc bad = desc;
    bad.struct_size = 0;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_queue_create(&bad, &queue));
    bad = desc;
    bad.event_size = 0;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_queue_create(&bad, &queue));
    EXPECT(queue == NULL);
    ecs_queue_destroy(NULL); /* a no-op */

    uint64_t event = 1, out = 0;
    size_t len = 99;
    ecs_queue *clone = NULL;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_push(NULL, &event));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_try_push(NULL, &event));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_try_pop(NULL, &out));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_pop_timeout(NULL, &out, 0));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_close(NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_len(NULL, &len));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_clone(NULL, &clone));

    queue = new_queue(8, 2);
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_push(queue, NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_try_push(queue, NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_try_pop(queue, NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_pop_timeout(queue, NULL, 0));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_len(queue, NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_queue_clone(queue, NULL));

    /* Empty: try_pop and a timed pop. */
    EXPECT_STATUS(ECS_ERR_QUEUE_EMPTY, ecs_queue_try_pop(queue, &out));
    double start = now_ms();
    EXPECT_STATUS(ECS_ERR_TIMEOUT, ecs_queue_pop_timeout(queue, &out, 30));
    EXPECT(now_ms() - start >= 25.0);

    /* Bounded, capacity 2: the third try_push is refused. */
    uint64_t first = 11, second = 22, third = 33;
    EXPECT_OK(ecs_queue_try_push(queue, &first));
    EXPECT_OK(ecs_queue_push(queue, &second));
    EXPECT_STATUS(ECS_ERR_QUEUE_FULL, ecs_queue_try_push(queue, &third));
    EXPECT_OK(ecs_queue_len(queue, &len));
    EXPECT_EQ_U64(2, len);

    /* Closed through a clone: queued events still delivered in order,
     * pushes refused (one popped first, so a push that wrongly waits for
     * room would not hang), then pops report the close at once. */
    EXPECT_OK(ecs_queue_clone(queue, &clone));
    EXPECT_OK(ecs_queue_close(clone));
    ecs_queue_destroy(clone);
    EXPECT_OK(ecs_queue_try_pop(queue, &out));
    EXPECT_EQ_U64(11, out);
    EXPECT_STATUS(ECS_ERR_QUEUE_CLOSED, ecs_queue_push(queue, &third));
    EXPECT_STATUS(ECS_ERR_QUEUE_CLOSED, ecs_queue_try_push(queue, &third));
    EXPECT_OK(ecs_queue_pop_timeout(queue, &out, 1000));
    EXPECT_EQ_U64(22, out);
    EXPECT_STATUS(ECS_ERR_QUEUE_CLOSED, ecs_queue_try_pop(queue, &out));
    start = now_ms();
    EXPECT_STATUS(ECS_ERR_QUEUE_CLOSED, ecs_queue_pop_timeout(queue, &out, 10000));
    EXPECT(now_ms() - start < 5000.0);
    EXPECT_OK(ecs_queue_len(queue, &len));
    EXPECT_EQ_U64(0, len);
    ecs_queue_destroy(queue);

    /* Events are copied by value, event_size bytes. */
    queue = new_queue(3, 0);
    unsigned char bytes[4] = {1, 2, 3, 0xEE};
    unsigned char got[4] = {0, 0, 0, 0x55};
    EXPECT_OK(ecs_queue_push(queue, bytes));
    bytes[0] = 9;
    EXPECT_OK(ecs_queue_try_pop(queue, got));
    EXPECT(got[0] == 1 && got[1] == 2 && got[2] == 3 && got[3] == 0x55);
    ecs_queue_destroy(queue);
}

#define PRODUCED 10000u

typedef struct Producer {
    ecs_queue *queue; /* its own handle */
    ecs_status push_status;
    ecs_status close_status;
    uint64_t pushed;
} Producer;

static void *produce(void *arg) {
    Producer *p = (Producer *)arg;
    p->push_status = ECS_OK;
    for (uint64_t i = 0; i < PRODUCED; i++) {
        ecs_status s = ecs_queue_push(p->queue, &i); /* blocks while full */
        if (s != ECS_OK) {
            p->push_status = s;
            break;
        }
        p->pushed++;
    }
    p->close_status = ecs_queue_close(p->queue);
    ecs_queue_destroy(p->queue);
    p->queue = NULL;
    return NULL;
}

void test_queue_threads(void) {
    current_test = "queue: a producer thread";
    ecs_queue *queue = new_queue(sizeof(uint64_t), 64);
    Producer producer = {0};
    EXPECT_OK(ecs_queue_clone(queue, &producer.queue));
    pthread_t thread;
    checks++;
    if (pthread_create(&thread, NULL, produce, &producer) != 0) {
        fail(__FILE__, __LINE__, "pthread_create failed");
    }
    uint64_t expected = 0;
    for (;;) {
        uint64_t value = UINT64_MAX;
        ecs_status s = ecs_queue_pop_timeout(queue, &value, 10000);
        if (s == ECS_ERR_QUEUE_CLOSED) {
            break;
        }
        if (s != ECS_OK) {
            fail(__FILE__, __LINE__, "pop %" PRIu64 ": %s: %s", expected, name_of(s),
                 ecs_last_error_message());
        }
        if (value != expected) {
            fail(__FILE__, __LINE__, "popped %" PRIu64 ", expected %" PRIu64, value, expected);
        }
        expected++;
    }
    pthread_join(thread, NULL);
    EXPECT_EQ_U64(PRODUCED, expected);
    EXPECT_EQ_U64(PRODUCED, producer.pushed);
    EXPECT(producer.push_status == ECS_OK);
    EXPECT(producer.close_status == ECS_OK);
    ecs_queue_destroy(queue);
}
