// ecs_runtime.hpp: a C++17 layer over the C API (ecs_runtime.h), header
// only. Everything here calls the C functions of the same name; what it adds:
//
// - ownership: `ecs::Engine` and `ecs::Queue<T>` destroy what they own, move
//   but never copy;
// - types: `ecs::Component<T>` is a component id that knows its C++ type, so
//   `insert`, `get` and views take and give `T` (a trivially copyable T is
//   stored by its bytes; any other T is boxed: see `Component`);
// - errors as exceptions: a failing call throws `ecs::Error` (its status and
//   the library's message). A C API call never lets an exception through
//   Rust: systems and view callbacks are C functions here that catch
//   whatever the C++ code inside throws, stop calling it, and hand it back
//   on the thread that called `Engine::tick`/`run`, which rethrows it (the
//   first one, in the order systems were added; the rest of the tick ran,
//   the others are dropped, and a system's commands recorded before its
//   throw are still applied);
// - snapshots as byte vectors: components registered with `ecs::savable`,
//   `Engine::save` and `Engine::load`;
// - systems as callables: `engine.add_system(ecs::System("move").reads(v)
//   .writes(p).run([=](ecs::SystemContext& ctx) { ... }))`.
//
// Link the `ecs_runtime::ecs_runtime` CMake target (ecs_capi/CMakeLists.txt,
// or the installed `ecs_runtime` package), which carries this header's
// folder as an include directory. Threads: as in the C API,
// systems run on the engine's worker threads, and an engine is used by one
// thread at a time outside them.
#ifndef ECS_RUNTIME_HPP
#define ECS_RUNTIME_HPP

#include "ecs_runtime.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ecs {

// An entity handle (see ecs_entity in ecs_runtime.h).
using Entity = ecs_entity;
// The handle that is never alive.
constexpr Entity null_entity = ECS_ENTITY_NULL;

// A failed C API call: its status, and a message naming the call and what
// the library said (ecs_last_error_message, read on the failing thread);
// or a refusal of this layer's own, with its own message.
class Error : public std::runtime_error {
public:
    Error(ecs_status status, const std::string& call)
        : std::runtime_error(call + " failed: " + name_of(status) + ": " + message()),
          status_(status) {}
    // A refusal of this layer's own, with its message (`what` says why).
    Error(ecs_status status, const std::string& call, const std::string& what)
        : std::runtime_error(call + " failed: " + name_of(status) + ": " + what),
          status_(status) {}
    // The C status code (ECS_ERR_...).
    ecs_status status() const noexcept { return status_; }

private:
    static std::string name_of(ecs_status status) {
        const char* name = ecs_status_name(status);
        return name ? name : "unknown status";
    }
    static std::string message() {
        const char* text = ecs_last_error_message();
        return text ? text : "";
    }
    ecs_status status_;
};

// Throws `Error` unless `status` is ECS_OK.
inline void check(ecs_status status, const char* call) {
    if (status != ECS_OK) {
        throw Error(status, call);
    }
}

template <class T>
struct Init;

// The tag that registers a component savable:
// `engine.component<Position>("Position", ecs::savable)` (see
// `Engine::component`, `Engine::save` and ecs_component_desc.savable).
struct Savable {
    explicit constexpr Savable() = default;
};
// The value of the tag `Savable`.
inline constexpr Savable savable{};

// The tag that registers a component that keeps change ticks and a log of
// removals: `engine.component<Health>("Health", ecs::track_changes)` (see
// ECS_COMPONENT_TRACK_CHANGES, `Filter::added`, `Filter::changed`
// and `SystemContext::removed`).
struct TrackChanges {
    explicit constexpr TrackChanges() = default;
};
// The value of the tag `TrackChanges`.
inline constexpr TrackChanges track_changes{};

// A component type's id in one engine, typed with its C++ type. A
// trivially copyable `T` is stored by its bytes, side by side with the
// other values (chunk walks hand out its columns). Any other `T`
// (`std::string`, `std::vector`, a class with a destructor) is boxed: the
// engine stores a pointer to a heap `T` and never moves the object
// itself; the layer deletes it when the value is dropped (removed,
// replaced, its entity despawned, a command never applied, the engine
// destroyed), on whichever thread drops it. A boxed component has no
// columns (no chunk walks: a compile-time error), cannot be savable, and
// keeps an engine from being saved in memory (`save_state`); its bytes
// are a heap address, so `Engine::checksum` refuses it (a compile-time
// error with typed components; not checked for a bare id). A
// type is boxed silently as soon as it is not trivially copyable (a
// user-written copy constructor, a virtual destructor, `std::pair`):
// `static_assert(std::is_trivially_copyable_v<T>)` where that matters.
// A boxed T's destructor must not throw (it runs inside the library:
// `std::terminate`). As with every component, a view hands out `T&` even
// for a component the system declared read-only: writing it is a data
// race with the other readers of its wave (with a boxed `std::string`, a
// corrupted heap).
template <class T>
struct Component {
    static_assert(!std::is_reference_v<T> && !std::is_const_v<T>,
                  "a component type is a plain object type");
    ecs_component_id id = 0;
    // A value of this component for `Engine::spawn`:
    // `engine.spawn(position.with({1, 2}), velocity.with({3, 4}))`.
    // Taken by value: a move-only type moves in.
    Init<T> with(T value) const { return Init<T>{*this, std::move(value)}; }
};

// A resource's id in one engine, typed with its C++ type (see
// ecs_resource_register).
template <class T>
struct Resource {
    static_assert(std::is_trivially_copyable_v<T>,
                  "a resource is copied by the engine as bytes: T must be trivially copyable");
    ecs_resource_id id = 0;
};

// An event channel's id in one engine, typed with its event type (see
// ecs_event_register): events are copied by the engine as bytes.
template <class T>
struct Event {
    static_assert(std::is_trivially_copyable_v<T>,
                  "an event is copied by the engine as bytes: T must be trivially copyable");
    static_assert(alignof(T) <= 16, "an event's alignment is at most 16 bytes");
    ecs_event_id id = 0;
};

// A component and its value, for `Engine::spawn`.
template <class T>
struct Init {
    Component<T> component;
    T value;
};

namespace detail {

// The first exception thrown by C++ code that a C callback ran; later
// ones are dropped. Filled from worker threads, rethrown by the owner.
class Failure {
public:
    // Runs `f`, keeping what it throws. Returns false when it threw (now
    // or before), so a loop of callbacks can stop calling user code.
    template <class F>
    bool guard(F&& f) noexcept {
        if (failed()) {
            return false;
        }
        try {
            f();
            return true;
        } catch (...) {
            keep(std::current_exception());
            return false;
        }
    }
    void keep(std::exception_ptr error) noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) {
            error_ = std::move(error);
            failed_.store(true, std::memory_order_release);
        }
    }
    // One atomic load: checked before every callback of a view.
    bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
    // Takes the kept exception (null when none), leaving none.
    std::exception_ptr take() noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        failed_.store(false, std::memory_order_relaxed);
        return std::exchange(error_, nullptr);
    }
    // Rethrows the kept exception, once.
    void rethrow() {
        if (std::exception_ptr error = take()) {
            std::rethrow_exception(error);
        }
    }

private:
    std::mutex mutex_;
    std::atomic<bool> failed_{false};
    std::exception_ptr error_;
};

// `T` in a parameter that takes no part in deducing `T` (C++20's
// `std::type_identity_t`): `engine.set(score, 0)` converts the 0.
template <class T>
struct SameType {
    using type = T;
};
template <class T>
using Same = typename SameType<T>::type;

// Whether the engine stores `T` boxed (see `Component`).
template <class T>
inline constexpr bool boxed = !std::is_trivially_copyable_v<T>;

// What the engine stores for a `T`: its bytes, or a box's pointer.
template <class T>
using Stored = std::conditional_t<boxed<T>, T*, T>;

// The value of `T` at `value`, a pointer the C API handed out (to the
// bytes of `T`, or to the box's pointer).
template <class T>
T& value_at(void* value) {
    if constexpr (boxed<T>) {
        return **static_cast<T**>(value);
    } else {
        return *static_cast<T*>(value);
    }
}

// Calls `insert(bytes)` with the bytes the engine stores for `value` (a
// box for a boxed `T`, deleted again when `insert` fails: the engine took
// nothing).
template <class T, class Insert>
ecs_status insert_value(T&& value, Insert&& insert) {
    using U = std::remove_cv_t<std::remove_reference_t<T>>;
    if constexpr (boxed<U>) {
        U* box = new U(std::forward<T>(value));
        const ecs_status status = insert(static_cast<const void*>(&box));
        if (status != ECS_OK) {
            delete box;
        }
        return status;
    } else {
        return insert(static_cast<const void*>(&value));
    }
}

template <class T>
void delete_box(void* value, void*) noexcept {
    delete *static_cast<T**>(value);
}

template <class... T>
constexpr void assert_columns() {
    static_assert(!(boxed<T> || ...),
                  "a chunk walk hands out columns of values side by side: a boxed component "
                  "(not trivially copyable) has none; walk it with `each`");
}

}  // namespace detail

// A system's command buffer, valid during the system's call: structural
// changes applied after the system's wave, in the order systems were added.
class Commands {
public:
    explicit Commands(ecs_commands* raw) noexcept : raw_(raw) {}

    // A handle for an entity spawned when the buffer is applied (usable in
    // this buffer's later commands).
    Entity spawn() {
        Entity entity = 0;
        check(ecs_commands_spawn(raw_, &entity), "ecs_commands_spawn");
        return entity;
    }
    void despawn(Entity entity) { check(ecs_commands_despawn(raw_, entity), "ecs_commands_despawn"); }
    // Records the insertion of `value` (a boxed one moved into its box).
    template <class T>
    void insert(Entity entity, Component<T> component, detail::Same<T> value) {
        check(detail::insert_value(std::move(value),
                                   [&](const void* bytes) {
                                       return ecs_commands_insert(raw_, entity, component.id,
                                                                  bytes);
                                   }),
              "ecs_commands_insert");
    }
    template <class T>
    void remove(Entity entity, Component<T> component) {
        check(ecs_commands_remove(raw_, entity, component.id), "ecs_commands_remove");
    }
    void set_parent(Entity child, Entity parent) {
        check(ecs_commands_set_parent(raw_, child, parent), "ecs_commands_set_parent");
    }
    void remove_parent(Entity child) {
        check(ecs_commands_remove_parent(raw_, child), "ecs_commands_remove_parent");
    }
    void despawn_recursive(Entity entity) {
        check(ecs_commands_despawn_recursive(raw_, entity), "ecs_commands_despawn_recursive");
    }
    void disable(Entity entity) { check(ecs_commands_disable(raw_, entity), "ecs_commands_disable"); }
    void enable(Entity entity) { check(ecs_commands_enable(raw_, entity), "ecs_commands_enable"); }
    void disable_recursive(Entity entity) {
        check(ecs_commands_disable_recursive(raw_, entity), "ecs_commands_disable_recursive");
    }
    void enable_recursive(Entity entity) {
        check(ecs_commands_enable_recursive(raw_, entity), "ecs_commands_enable_recursive");
    }

private:
    ecs_commands* raw_;
};

// An optional term of `SystemContext::each_where`: the callback gets a
// `T*`, nullptr where the entity has none, instead of a `T&`, and the
// entity is visited either way. `ctx.each_where(ecs::Filter(), f, health,
// ecs::optional(shield))` calls `f(entity, Health&, Shield*)`. Optional
// terms come after the others; they have no chunk walks.
template <class T>
struct Optional {
    Component<T> component;
};
template <class T>
Optional<T> optional(Component<T> component) {
    return Optional<T>{component};
}

namespace detail {

// What a term of a walk gives the callback (`arg`) from the C pointer.
template <class Term>
struct TermOf;
template <class T>
struct TermOf<Component<T>> {
    using arg = T&;
    static constexpr bool optional = false;
    static T& at(void* value) { return value_at<T>(value); }
};
template <class T>
struct TermOf<Optional<T>> {
    using arg = T*;
    static constexpr bool optional = true;
    static T* at(void* value) { return value != nullptr ? &value_at<T>(value) : nullptr; }
};

template <class... Terms>
constexpr bool optional_terms_last() {
    bool seen = false, last = true;
    ((TermOf<Terms>::optional ? void(seen = true) : void(last = last && !seen)), ...);
    return last;
}

template <class T>
ecs_component_id term_id(Component<T> c) {
    return c.id;
}
template <class T>
ecs_component_id term_id(Optional<T> o) {
    return o.component.id;
}

template <class... Terms, class F, std::size_t... I>
void call_each(F& f, Entity e, void* const* c, std::index_sequence<I...>) {
    f(e, TermOf<Terms>::at(c[I])...);
}

}  // namespace detail

// The filters of `SystemContext::each_where`: components an entity must
// also have (`with`), must not have (`without`), and whose value was added
// (`added`) or added or written (`changed`) since the system's last run
// (every value on its first run; the component registered with
// `track_changes`). Every id must be declared by the system. The lists
// are copied: a `Filter` may be built once and reused.
class Filter {
public:
    template <class T>
    Filter& with(Component<T> component) {
        with_.push_back(component.id);
        return *this;
    }
    template <class T>
    Filter& without(Component<T> component) {
        without_.push_back(component.id);
        return *this;
    }
    template <class T>
    Filter& added(Component<T> component) {
        added_.push_back(component.id);
        return *this;
    }
    template <class T>
    Filter& changed(Component<T> component) {
        changed_.push_back(component.id);
        return *this;
    }
    // The C descriptor over `ids`, pointing into this filter.
    ecs_view_desc desc(const ecs_component_id* ids, std::size_t len) const {
        ecs_view_desc desc{};
        desc.struct_size = sizeof desc;
        desc.ids = ids;
        desc.ids_len = len;
        desc.with = with_.data();
        desc.with_len = with_.size();
        desc.without = without_.data();
        desc.without_len = without_.size();
        desc.added = added_.data();
        desc.added_len = added_.size();
        desc.changed = changed_.data();
        desc.changed_len = changed_.size();
        return desc;
    }

private:
    std::vector<ecs_component_id> with_, without_, added_, changed_;
};

// What a system gets when it runs: the tick, its declared components, views
// and its command buffer. Valid during the system's call only.
class SystemContext {
public:
    explicit SystemContext(ecs_system_ctx* raw) noexcept : raw_(raw) {}

    ecs_tick tick() const {
        ecs_tick tick{};
        check(ecs_ctx_tick(raw_, &tick), "ecs_ctx_tick");
        return tick;
    }
    bool is_alive(Entity entity) const noexcept { return ecs_ctx_is_alive(raw_, entity); }

    // The resource, declared read or written by the system (throws
    // `Error`, ECS_ERR_UNDECLARED, when not); valid during the call.
    template <class T>
    const T& read(Resource<T> resource) const {
        const void* value = nullptr;
        check(ecs_ctx_resource_read(raw_, resource.id, &value), "ecs_ctx_resource_read");
        return *static_cast<const T*>(value);
    }
    // The resource, declared written by the system; valid during the call.
    template <class T>
    T& write(Resource<T> resource) {
        void* value = nullptr;
        check(ecs_ctx_resource_write(raw_, resource.id, &value), "ecs_ctx_resource_write");
        return *static_cast<T*>(value);
    }

    // Sends `value` on `channel` (declared with `System::sends`): readers
    // see it when this system's wave ends, even if the body throws later
    // (only `fail` drops a system's sends).
    template <class T>
    void send(Event<T> channel, const T& value) {
        check(ecs_ctx_send_event(raw_, channel.id, &value, sizeof(T)), "ecs_ctx_send_event");
    }
    // Calls `f(const T&)` with each event of `channel` (declared with
    // `System::reads`: `sends` alone is not enough) this system has not
    // seen yet, oldest first, and returns the counts (`read`, and
    // `missed`: dropped by age before this system ran). Each event is
    // handed out once: if `f` throws, the walk stops and the exception is
    // rethrown here (then, like any throw in a body, after the tick), and
    // the events after the one it threw on are passed over, not counted
    // as missed. Do not call `read` from inside `f` (ECS_ERR_WRONG_STATE).
    template <class T, class F>
    ecs_events_read read(Event<T> channel, F&& f) {
        struct Walk {
            std::remove_reference_t<F>* f;
            detail::Failure failure;
        } walk{&f, {}};
        auto visit = [](const void* event, void* data) {
            auto& w = *static_cast<Walk*>(data);
            w.failure.guard([&] { (*w.f)(*static_cast<const T*>(event)); });
        };
        ecs_events_read counts{};
        ecs_status status = ecs_ctx_read_events(raw_, channel.id, visit, &walk, &counts);
        walk.failure.rethrow();
        check(status, "ecs_ctx_read_events");
        return counts;
    }

    // `entity`'s component (declared by the system); throws `Error` when
    // the entity is stale or has none.
    template <class T>
    T& get(Entity entity, Component<T> component) {
        void* value = nullptr;
        check(ecs_ctx_get(raw_, entity, component.id, &value), "ecs_ctx_get");
        return detail::value_at<T>(value);
    }
    // `entity`'s component, or nullptr when it has none (see
    // ecs_ctx_try_get); throws `Error` as `get` does otherwise. Like `get`,
    // a component declared written counts as changed.
    template <class T>
    T* try_get(Entity entity, Component<T> component) {
        void* value = nullptr;
        check(ecs_ctx_try_get(raw_, entity, component.id, &value), "ecs_ctx_try_get");
        return value != nullptr ? &detail::value_at<T>(value) : nullptr;
    }
    // Whether `entity` has the component (declared by the system); marks
    // nothing.
    template <class T>
    bool has(Entity entity, Component<T> component) const {
        bool out = false;
        check(ecs_ctx_has(raw_, entity, component.id, &out), "ecs_ctx_has");
        return out;
    }

    // Calls `f(entity, T&...)` for every entity with all the components,
    // in the view's order. What `f` throws stops the walk and is rethrown
    // here.
    template <class... T, class F>
    void each(F&& f, Component<T>... components) {
        const ecs_component_id ids[] = {components.id...};
        each_of<Component<T>...>(
            std::forward<F>(f),
            [&](ecs_each_fn visit, void* data) {
                return ecs_view_each(raw_, ids, sizeof...(T), visit, data);
            },
            "ecs_view_each");
    }

    // As `each`, for the entities that also have every component of `with`
    // and none of `without` (ids the system declared it reads or writes).
    template <class... T, class F>
    void each_filtered(F&& f, std::initializer_list<ecs_component_id> with,
                       std::initializer_list<ecs_component_id> without,
                       Component<T>... components) {
        const ecs_component_id ids[] = {components.id...};
        ecs_view_desc desc{};
        desc.struct_size = sizeof desc;
        desc.ids = ids;
        desc.ids_len = sizeof...(T);
        desc.with = with.begin();
        desc.with_len = with.size();
        desc.without = without.begin();
        desc.without_len = without.size();
        each_of<Component<T>...>(
            std::forward<F>(f),
            [&](ecs_each_fn visit, void* data) {
                return ecs_view_each_filtered(raw_, &desc, visit, data);
            },
            "ecs_view_each_filtered");
    }

    // As `each`, for the entities that pass `filter` (see `Filter`):
    // `ctx.each_where(ecs::Filter().changed(health), f, health)`. Throws
    // `Error` as `each` does, and for an `added` or `changed` component
    // registered without `track_changes` (ECS_ERR_INVALID_ARGUMENT).
    // Terms may end with optional ones (`ecs::optional(shield)`): `f` gets
    // a `T*` for each, nullptr where the entity has none.
    template <class... Terms, class F>
    void each_where(const Filter& filter, F&& f, Terms... terms) {
        static_assert(detail::optional_terms_last<Terms...>(),
                      "each_where: the optional terms come after the others");
        constexpr std::size_t optional = (std::size_t{detail::TermOf<Terms>::optional} + ... + 0);
        const ecs_component_id all[] = {detail::term_id(terms)...};
        constexpr std::size_t required = sizeof...(Terms) - optional;
        ecs_view_desc desc = filter.desc(all, required);
        desc.optional = optional > 0 ? all + required : nullptr;
        desc.optional_len = optional;
        each_of<Terms...>(
            std::forward<F>(f),
            [&](ecs_each_fn visit, void* data) {
                return ecs_view_each_filtered(raw_, &desc, visit, data);
            },
            "ecs_view_each_filtered");
    }

    // As `each_chunk`, for the entities that pass `filter` (the chunks are
    // cut around the others; see ecs_view_each_chunk_filtered).
    template <class... T, class F>
    void each_chunk_where(const Filter& filter, F&& f, Component<T>... components) {
        const ecs_component_id ids[] = {components.id...};
        const ecs_view_desc desc = filter.desc(ids, sizeof...(T));
        chunks_of<T...>(
            f,
            [&](ecs_chunk_fn visit, void* data) {
                return ecs_view_each_chunk_filtered(raw_, &desc, visit, data);
            },
            "ecs_view_each_chunk_filtered");
    }

    // Calls `f(entity)` for every entity that lost `component` since this
    // system last asked (see ecs_ctx_removed; the component registered
    // with `track_changes` and declared by the system), oldest first, and
    // returns the number of removals the bounded log dropped before this
    // system read them. What `f` throws stops the calls and is rethrown
    // here (the removals are read all the same).
    template <class T, class F>
    std::uint64_t removed(Component<T> component, F&& f) {
        struct Walk {
            std::remove_reference_t<F>* f;
            detail::Failure failure;
        } walk{&f, {}};
        auto visit = [](ecs_entity entity, void* data) {
            auto& w = *static_cast<Walk*>(data);
            w.failure.guard([&] { (*w.f)(Entity(entity)); });
        };
        std::uint64_t missed = 0;
        ecs_status status = ecs_ctx_removed(raw_, component.id, visit, &walk, &missed);
        walk.failure.rethrow();
        check(status, "ecs_ctx_removed");
        return missed;
    }

    // Calls `f(len, entities, T*...)` once per run of entities whose
    // components lie side by side: `entities[i]` owns row `i` of every column.
    template <class... T, class F>
    void each_chunk(F&& f, Component<T>... components) {
        const ecs_component_id ids[] = {components.id...};
        chunks_of<T...>(
            f,
            [&](ecs_chunk_fn visit, void* data) {
                return ecs_view_each_chunk(raw_, ids, sizeof...(T), visit, data);
            },
            "ecs_view_each_chunk");
    }

    // As `each_chunk`, but the pieces of the chunks (at most
    // ECS_PAR_CHUNK_ROWS rows each) go to the engine's worker threads
    // several at once, in no fixed order (see ecs_view_par_each_chunk): `f`
    // is called from several threads at once and may write only its own
    // rows, and must not use `ctx` (or its commands): they belong to the
    // system's thread (ECS_ERR_WRONG_STATE elsewhere). `f` is called as
    // `f(len, entities, T*...)`, like `each_chunk`'s. The first exception
    // `f` throws stops the calls not yet begun and is rethrown here.
    template <class... T, class F>
    void par_each_chunk(F&& f, Component<T>... components) {
        const ecs_component_id ids[] = {components.id...};
        chunks_of<T...>(
            f,
            [&](ecs_chunk_fn visit, void* data) {
                return ecs_view_par_each_chunk(raw_, ids, sizeof...(T), visit, data);
            },
            "ecs_view_par_each_chunk");
    }

    // Fails the system, as a Rust system returning an error does (see
    // ecs_ctx_fail): when its body returns, its commands and sent events
    // are dropped, its reads are handed out again next time, and the tick
    // throws `Error` (ECS_ERR_SYSTEM_FAILED) naming it and `message`. (A
    // body that throws instead keeps its commands and events: the
    // exception is rethrown after the tick; a body that calls `fail` and
    // then throws loses its effects, and the tick rethrows its exception.)
    // Like every call on `ctx`, only on the system's own thread.
    void fail(const char* message) { check(ecs_ctx_fail(raw_, message), "ecs_ctx_fail"); }

    // The system's command buffer (it must have declared commands).
    Commands commands() {
        ecs_commands* raw = nullptr;
        check(ecs_ctx_commands(raw_, &raw), "ecs_ctx_commands");
        return Commands(raw);
    }

    // The C context, for calls this layer does not wrap.
    ecs_system_ctx* raw() const noexcept { return raw_; }

private:
    template <class... T, class F, std::size_t... I>
    static void call_chunk(F& f, const ecs_view_chunk* chunk, std::index_sequence<I...>) {
        f(chunk->len, chunk->entities, static_cast<T*>(chunk->columns[I])...);
    }

    // A chunk walk of `f` over columns of `T...`: `run(visit, data)` calls
    // the C walk (ecs_view_each_chunk, its parallel twin, its filtered
    // one); what `f` throws stops the walk and is rethrown.
    template <class... T, class F, class Run>
    void chunks_of(F& f, Run&& run, const char* call) {
        detail::assert_columns<T...>();
        struct Walk {
            F* f;
            detail::Failure failure;
        } state{&f, {}};
        auto visit = [](const ecs_view_chunk* chunk, void* data) {
            auto& w = *static_cast<Walk*>(data);
            w.failure.guard(
                [&] { call_chunk<T...>(*w.f, chunk, std::index_sequence_for<T...>{}); });
        };
        ecs_status status = run(+visit, &state);
        state.failure.rethrow();
        check(status, call);
    }

    template <class... Terms, class F, class Run>
    void each_of(F&& f, Run&& run, const char* call) {
        static_assert(std::is_invocable_v<std::remove_reference_t<F>&, Entity,
                                          typename detail::TermOf<Terms>::arg...>,
                      "the callback of `each` takes (ecs::Entity, T&...): one reference per "
                      "component (a T* for an ecs::optional term), in the order given");
        // `f` called directly (no std::function): one indirect call per
        // entity, the C walk's.
        struct Walk {
            std::remove_reference_t<F>* f;
            detail::Failure failure;
        } walk{&f, {}};
        auto visit = [](ecs_entity entity, void* const* components, void* data) {
            auto& w = *static_cast<Walk*>(data);
            w.failure.guard([&] {
                detail::call_each<Terms...>(*w.f, entity, components,
                                            std::index_sequence_for<Terms...>{});
            });
        };
        ecs_status status = run(+visit, &walk);
        walk.failure.rethrow();
        check(status, call);
    }

    ecs_system_ctx* raw_;
};

class World;

// A system to add: its name, what it reads and writes, whether it records
// commands, its ordering, and its body.
class System {
public:
    explicit System(std::string name) : name_(std::move(name)) {}

    template <class T>
    System& reads(Component<T> component) {
        reads_.push_back(component.id);
        return *this;
    }
    template <class T>
    System& writes(Component<T> component) {
        writes_.push_back(component.id);
        return *this;
    }
    // The system records commands (SystemContext::commands).
    System& commands() {
        commands_ = true;
        return *this;
    }
    System& before(std::string other) {
        before_.push_back(std::move(other));
        return *this;
    }
    System& after(std::string other) {
        after_.push_back(std::move(other));
        return *this;
    }
    // Handles kept reserved between ticks (see ecs_system_desc.spawn_reserve).
    System& spawn_reserve(std::size_t handles) {
        spawn_reserve_ = handles;
        return *this;
    }
    // Resources the system reads or writes (ordered like Rust Res/ResMut).
    template <class T>
    System& reads(Resource<T> resource) {
        resource_reads_.push_back(resource.id);
        return *this;
    }
    template <class T>
    System& writes(Resource<T> resource) {
        resource_writes_.push_back(resource.id);
        return *this;
    }
    // Event channels the system reads (`SystemContext::read`) or sends on
    // (`SystemContext::send`): a sender runs before the readers of its
    // channel; two senders may run together.
    template <class T>
    System& reads(Event<T> channel) {
        event_reads_.push_back(channel.id);
        return *this;
    }
    template <class T>
    System& sends(Event<T> channel) {
        event_writes_.push_back(channel.id);
        return *this;
    }
    // A run condition, evaluated once per tick before the system on the
    // worker that would run it: false skips the system. What it throws
    // skips the system and is rethrown after the tick, like a body's.
    System& run_if(std::function<bool(const SystemContext&)> condition) {
        condition_ = std::move(condition);
        return *this;
    }
    // The system joins the set `set` (see `Set` and `Engine::configure`):
    // the set's ordering and condition apply to it, and other systems may
    // order themselves before or after the set by its name.
    System& in_set(std::string set) {
        sets_.push_back(std::move(set));
        return *this;
    }
    // A startup system: runs once, before the first tick's systems.
    System& startup() {
        startup_ = true;
        return *this;
    }
    // The body, called once per tick on a worker thread.
    System& run(std::function<void(SystemContext&)> body) {
        body_ = std::move(body);
        return *this;
    }
    // An exclusive system's body instead (see ecs_system_desc.run_exclusive):
    // called once per tick, alone between waves, with the engine's world
    // and the tick being run,
    // whose calls apply at once (on this thread only; other engine calls
    // throw ECS_ERR_WRONG_STATE). It declares nothing: it has everything.
    // What it throws is rethrown after the tick, as for `run`. A system
    // given both `run` and `run_exclusive` is refused by `add_system`
    // (ECS_ERR_INVALID_ARGUMENT).
    System& run_exclusive(std::function<void(World&, const ecs_tick&)> body) {
        exclusive_ = std::move(body);
        return *this;
    }

private:
    friend class Engine;
    std::string name_;
    std::vector<ecs_component_id> reads_, writes_;
    bool commands_ = false;
    std::vector<std::string> before_, after_;
    std::size_t spawn_reserve_ = 0;
    std::function<void(SystemContext&)> body_;
    std::function<void(World&, const ecs_tick&)> exclusive_;
    std::vector<ecs_resource_id> resource_reads_, resource_writes_;
    std::function<bool(const SystemContext&)> condition_;
    bool startup_ = false;
    std::vector<ecs_event_id> event_reads_, event_writes_;
    std::vector<std::string> sets_;
};

// A system set to configure with `Engine::configure`: every member (a
// system with `in_set(name)`) runs before / after what it names, and only
// on ticks where its condition holds (evaluated once per tick for the
// whole set; what it throws skips the set and is rethrown after the tick).
class Set {
public:
    explicit Set(std::string name) : name_(std::move(name)) {}
    Set& before(std::string other) {
        before_.push_back(std::move(other));
        return *this;
    }
    Set& after(std::string other) {
        after_.push_back(std::move(other));
        return *this;
    }
    // The condition's context declares nothing: read what it needs
    // through its own captures.
    Set& run_if(std::function<bool(const SystemContext&)> condition) {
        condition_ = std::move(condition);
        return *this;
    }

private:
    friend class Engine;
    std::string name_;
    std::vector<std::string> before_, after_;
    std::function<bool(const SystemContext&)> condition_;
};

// Owns an ecs_state: a whole engine saved in memory by
// `Engine::save_state`, restored by `Engine::restore_state` (see
// ecs_engine_save_state), for rollback. Empty until the first save.
class State {
public:
    State() { check(ecs_state_create(&raw_), "ecs_state_create"); }
    ~State() { ecs_state_destroy(raw_); }
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    State(State&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
    State& operator=(State&& other) noexcept {
        std::swap(raw_, other.raw_);
        return *this;
    }
    // The engine's tick count at the save; throws `Error`
    // (ECS_ERR_WRONG_STATE) for an empty state.
    std::uint64_t ticks() const {
        std::uint64_t ticks = 0;
        check(ecs_state_ticks(raw_, &ticks), "ecs_state_ticks");
        return ticks;
    }
    // The C state, for calls this layer does not wrap.
    ecs_state* raw() const noexcept { return raw_; }

private:
    ecs_state* raw_ = nullptr;
};

// The world of an engine, not owned: entities, components, the hierarchy,
// disabled entities and resources. `Engine` is one (and owns its engine);
// an exclusive system's body gets one (`System::run_exclusive`), whose
// calls apply at once during the tick, on that thread only.
class World {
public:
    explicit World(ecs_engine* raw) noexcept : raw_(raw) {}

    // The component registered as `name`, typed as `T`. Throws `Error`:
    // ECS_ERR_UNKNOWN_COMPONENT when no component has the name, and
    // ECS_ERR_INVALID_ARGUMENT (checked with ecs_component_get_info) when
    // `T` is not stored the way the component was registered: another size
    // or alignment (a boxed `T` is stored as a pointer; an empty `T` also
    // matches a C tag of size 0), or a boxed `T` for a component registered
    // without a destructor. Beyond that the caller vouches for the type: a
    // component boxed by this layer has a destructor, as a C component
    // owning memory does, so a plain pointer-sized `T` is not told apart
    // from a box.
    template <class T>
    Component<T> lookup(const char* name) const {
        Component<T> component;
        check(ecs_component_lookup(raw_, name, &component.id), "ecs_component_lookup");
        ecs_component_info info{};
        info.struct_size = sizeof info;
        check(ecs_component_get_info(raw_, component.id, &info), "ecs_component_get_info");
        using Stored = detail::Stored<T>;
        const bool c_tag = info.size == 0 && std::is_empty_v<T> && info.align == alignof(T);
        if (!c_tag && (info.size != sizeof(Stored) || info.align != alignof(Stored))) {
            throw Error(ECS_ERR_INVALID_ARGUMENT, "lookup",
                        std::string("component `") + name + "` is " + std::to_string(info.size) +
                            " bytes aligned to " + std::to_string(info.align) +
                            ", the type asked for is stored as " + std::to_string(sizeof(Stored)) +
                            " aligned to " + std::to_string(alignof(Stored)));
        }
        if (detail::boxed<T> && !info.has_drop) {
            throw Error(ECS_ERR_INVALID_ARGUMENT, "lookup",
                        std::string("component `") + name +
                            "` has no destructor, so it holds no box: the type asked for is not "
                            "trivially copyable, and this layer stores it boxed");
        }
        return component;
    }

    Entity spawn() {
        Entity entity = 0;
        check(ecs_spawn(raw_, &entity), "ecs_spawn");
        return entity;
    }
    // Spawns an entity with the given components.
    // All or nothing: when an insert throws (ecs::Error, or a boxed T's
    // move), the entity is despawned before the exception goes on.
    template <class... T>
    Entity spawn(Init<T>... components) {
        Entity entity = spawn();
        try {
            (insert(entity, components.component, std::move(components.value)), ...);
        } catch (...) {
            ecs_despawn(raw_, entity);
            throw;
        }
        return entity;
    }
    void despawn(Entity entity) { check(ecs_despawn(raw_, entity), "ecs_despawn"); }
    bool is_alive(Entity entity) const noexcept { return ecs_is_alive(raw_, entity); }
    std::size_t entity_count() const {
        std::size_t n = 0;
        check(ecs_entity_count(raw_, &n), "ecs_entity_count");
        return n;
    }
    // The live entities in increasing handle order (see ecs_entities).
    std::vector<Entity> entities() const {
        std::vector<Entity> out;
        std::size_t len = 0;
        do {
            out.resize(len);
            check(ecs_entities(raw_, out.data(), out.size(), &len), "ecs_entities");
        } while (len > out.size());
        out.resize(len);
        return out;
    }

    // Inserts `value` (a boxed one moved into its box), dropping an old one.
    template <class T>
    void insert(Entity entity, Component<T> component, detail::Same<T> value) {
        check(detail::insert_value(std::move(value),
                                   [&](const void* bytes) {
                                       return ecs_insert(raw_, entity, component.id, bytes);
                                   }),
              "ecs_insert");
    }
    // `entity`'s component; throws `Error` (ECS_ERR_MISSING_COMPONENT,
    // ECS_ERR_STALE_ENTITY) when there is none.
    template <class T>
    T& get(Entity entity, Component<T> component) {
        void* value = nullptr;
        check(ecs_get(raw_, entity, component.id, &value), "ecs_get");
        return detail::value_at<T>(value);
    }
    // `entity`'s component, or nullptr when it has none (a stale entity
    // still throws).
    template <class T>
    T* try_get(Entity entity, Component<T> component) {
        return has(entity, component) ? &get(entity, component) : nullptr;
    }
    template <class T>
    bool has(Entity entity, Component<T> component) const {
        bool out = false;
        check(ecs_has(raw_, entity, component.id, &out), "ecs_has");
        return out;
    }
    template <class T>
    void remove(Entity entity, Component<T> component) {
        check(ecs_remove(raw_, entity, component.id), "ecs_remove");
    }

    void set_parent(Entity child, Entity parent) {
        check(ecs_set_parent(raw_, child, parent), "ecs_set_parent");
    }
    // The old parent (null_entity when it had none).
    Entity remove_parent(Entity child) {
        Entity old = null_entity;
        check(ecs_remove_parent(raw_, child, &old), "ecs_remove_parent");
        return old;
    }
    // null_entity for a root.
    Entity parent(Entity entity) const {
        Entity out = null_entity;
        check(ecs_parent(raw_, entity, &out), "ecs_parent");
        return out;
    }
    // In the order they were attached.
    std::vector<Entity> children(Entity entity) const {
        std::vector<Entity> out;
        std::size_t len = 0;
        do {
            out.resize(len);
            check(ecs_children(raw_, entity, out.data(), out.size(), &len), "ecs_children");
        } while (len > out.size());
        out.resize(len);
        return out;
    }
    // How many entities were despawned.
    std::size_t despawn_recursive(Entity entity) {
        std::size_t count = 0;
        check(ecs_despawn_recursive(raw_, entity, &count), "ecs_despawn_recursive");
        return count;
    }
    // Whether it was enabled before.
    bool disable(Entity entity) {
        bool changed = false;
        check(ecs_disable(raw_, entity, &changed), "ecs_disable");
        return changed;
    }
    // Whether it was disabled before.
    bool enable(Entity entity) {
        bool changed = false;
        check(ecs_enable(raw_, entity, &changed), "ecs_enable");
        return changed;
    }
    // `entity` and its whole subtree; how many were enabled before.
    std::size_t disable_recursive(Entity entity) {
        std::size_t count = 0;
        check(ecs_disable_recursive(raw_, entity, &count), "ecs_disable_recursive");
        return count;
    }
    // `entity` and its whole subtree; how many were disabled before.
    std::size_t enable_recursive(Entity entity) {
        std::size_t count = 0;
        check(ecs_enable_recursive(raw_, entity, &count), "ecs_enable_recursive");
        return count;
    }
    bool is_disabled(Entity entity) const {
        bool out = false;
        check(ecs_is_disabled(raw_, entity, &out), "ecs_is_disabled");
        return out;
    }

    // A copy of the resource's value (between ticks, or in an exclusive
    // system).
    template <class T>
    T get(Resource<T> resource) const {
        T value{};
        check(ecs_resource_get(raw_, resource.id, &value, sizeof(T)), "ecs_resource_get");
        return value;
    }
    // Overwrites the resource's value (between ticks, or in an exclusive
    // system).
    template <class T>
    void set(Resource<T> resource, const detail::Same<T>& value) {
        check(ecs_resource_set(raw_, resource.id, &value, sizeof(T)), "ecs_resource_set");
    }

    // The C engine, for calls this layer does not wrap.
    ecs_engine* raw() const noexcept { return raw_; }

protected:
    ecs_engine* raw_ = nullptr;
};

// Owns an ecs_engine: a registry, a schedule and a pool of threads; its
// world calls are `World`'s.
class Engine : public World {
public:
    // `threads` workers (1 to ECS_THREADS_MAX); `step_seconds` the fixed
    // tick (0: 1/60 s).
    explicit Engine(std::uint32_t threads = 1, double step_seconds = 0.0) : World(nullptr) {
        ecs_engine_desc desc{};
        desc.struct_size = sizeof desc;
        desc.threads = threads;
        desc.step_seconds = step_seconds;
        check(ecs_engine_create(&desc, &raw_), "ecs_engine_create");
    }
    ~Engine() { ecs_engine_destroy(raw_); }
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
    Engine(Engine&& other) noexcept
        : World(std::exchange(other.raw_, nullptr)), systems_(std::move(other.systems_)) {}
    Engine& operator=(Engine&& other) noexcept {
        std::swap(raw_, other.raw_);
        std::swap(systems_, other.systems_);
        return *this;
    }

    // Registers `T` under `name` (unique in the engine).
    template <class T>
    Component<T> component(const char* name) {
        return register_component<T>(name, false, false);
    }
    // Registers `T` under `name` (unique in the engine) as savable: its
    // values are plain data that `save` and `load` copy by their bytes
    // (ecs_component_desc.savable). The caller promises, for every value
    // it inserts: every byte of `sizeof(T)` is initialised, padding
    // included (a `T` without padding, or one zeroed with `std::memset`
    // before its members are set), and the value owns nothing and holds no
    // pointer or handle it relies on (bytes saved by one process must be a
    // valid `T` when loaded by another). A bare pointer `T` is refused at
    // compile time. Throws `Error` as the other overload does.
    template <class T>
    Component<T> component(const char* name, Savable) {
        static_assert(!std::is_pointer_v<T> && !std::is_member_pointer_v<T>,
                      "a savable component is saved as bytes: a pointer means nothing when loaded");
        static_assert(!detail::boxed<T>,
                      "a savable component is saved as bytes: T must be trivially copyable");
        return register_component<T>(name, true, false);
    }
    // Registers `T` under `name` keeping change ticks and a removal log
    // (ECS_COMPONENT_TRACK_CHANGES), for `Filter::added`,
    // `Filter::changed` and `SystemContext::removed`.
    template <class T>
    Component<T> component(const char* name, TrackChanges) {
        return register_component<T>(name, false, true);
    }
    // Both: savable and keeping change ticks.
    template <class T>
    Component<T> component(const char* name, Savable, TrackChanges) {
        static_assert(!std::is_pointer_v<T> && !std::is_member_pointer_v<T>,
                      "a savable component is saved as bytes: a pointer means nothing when loaded");
        static_assert(!detail::boxed<T>,
                      "a savable component is saved as bytes: T must be trivially copyable");
        return register_component<T>(name, true, true);
    }
    // Registers a resource `T` under `name` holding `initial`.
    template <class T>
    Resource<T> resource(const char* name, const T& initial = T{}) {
        return register_resource(name, initial, false);
    }
    // Registers a savable resource `T` under `name` holding `initial`:
    // `Engine::save` and `Engine::load` copy it by its bytes (every byte of
    // `initial` and of what is written later initialised, padding included;
    // no pointer; see ecs_resource_desc.savable). An engine with a resource
    // registered without the tag can be neither saved nor loaded.
    template <class T>
    Resource<T> resource(const char* name, const T& initial, Savable) {
        static_assert(!std::is_pointer_v<T> && !std::is_member_pointer_v<T>,
                      "a savable resource is saved as bytes: a pointer means nothing when loaded");
        return register_resource(name, initial, true);
    }
    // What the last tick's command buffers did: applied, skipped and no-op
    // commands by kind (`ECS_COMMAND_*`) and the first skipped command;
    // all zero before the first tick.
    ecs_command_report command_report() const {
        ecs_command_report report{};
        report.struct_size = sizeof report;
        check(ecs_engine_command_report(raw_, &report), "ecs_engine_command_report");
        return report;
    }
    // The same for the command buffer of the system named `system`.
    ecs_command_report command_report(const char* system) const {
        ecs_command_report report{};
        report.struct_size = sizeof report;
        check(ecs_system_command_report(raw_, system, &report), "ecs_system_command_report");
        return report;
    }

    // Registers an event channel of `T` under `name` (see
    // ecs_event_register). `Engine::save` is refused while it holds events.
    template <class T>
    Event<T> event(const char* name) {
        return register_event<T>(name, false);
    }
    // Registers a savable event channel of `T`: `Engine::save` and
    // `Engine::load` copy its events in flight by their bytes (every byte
    // initialised, padding included; no pointer; see
    // ecs_event_desc.savable).
    template <class T>
    Event<T> event(const char* name, Savable) {
        static_assert(!std::is_pointer_v<T> && !std::is_member_pointer_v<T>,
                      "a savable event is saved as bytes: a pointer means nothing when loaded");
        return register_event<T>(name, true);
    }
    // Sends `value` on `channel` between ticks: the next tick's readers
    // see it.
    template <class T>
    void send(Event<T> channel, const T& value) {
        check(ecs_event_send(raw_, channel.id, &value, sizeof(T)), "ecs_event_send");
    }
    // The channel's counts: sent, retained, missed.
    template <class T>
    ecs_event_stats stats(Event<T> channel) const {
        ecs_event_stats stats{};
        check(ecs_event_get_stats(raw_, channel.id, &stats), "ecs_event_get_stats");
        return stats;
    }

    // Configures a set (before `build`; see `Set`). Its condition is kept
    // by the engine.
    void configure(Set set) {
        systems_.emplace_back(nullptr);
        Added& added = systems_.back();
        added.condition = std::move(set.condition_);
        std::vector<const char*> before = c_strings(set.before_), after = c_strings(set.after_);
        ecs_set_desc desc{};
        desc.struct_size = sizeof desc;
        desc.name = set.name_.c_str();
        desc.before = before.data();
        desc.before_len = before.size();
        desc.after = after.data();
        desc.after_len = after.size();
        if (added.condition) {
            desc.run_if = &Engine::condition_trampoline;
            desc.run_if_user_data = &added;
        }
        ecs_status status = ecs_set_configure(raw_, &desc);
        if (status != ECS_OK) {
            systems_.pop_back();
            check(status, "ecs_set_configure");
        }
    }

    // Adds a system (before `build`). Its body is kept by the engine.
    void add_system(System system) {
        systems_.emplace_back(std::move(system.body_));
        Added& added = systems_.back();
        added.condition = std::move(system.condition_);
        added.exclusive = std::move(system.exclusive_);
        std::vector<const char*> sets = c_strings(system.sets_);
        std::vector<const char*> before = c_strings(system.before_);
        std::vector<const char*> after = c_strings(system.after_);
        ecs_system_desc desc{};
        desc.struct_size = sizeof desc;
        desc.name = system.name_.c_str();
        // Both bodies set: the C layer refuses the system.
        if (added.exclusive) {
            desc.run_exclusive = &Engine::exclusive_trampoline;
        }
        if (added.body || !added.exclusive) {
            desc.run = &Engine::trampoline;
        }
        desc.user_data = &added;
        desc.reads = system.reads_.data();
        desc.reads_len = system.reads_.size();
        desc.writes = system.writes_.data();
        desc.writes_len = system.writes_.size();
        desc.commands = system.commands_;
        desc.before = before.data();
        desc.before_len = before.size();
        desc.after = after.data();
        desc.after_len = after.size();
        desc.spawn_reserve = system.spawn_reserve_;
        desc.resource_reads = system.resource_reads_.data();
        desc.resource_reads_len = system.resource_reads_.size();
        desc.resource_writes = system.resource_writes_.data();
        desc.resource_writes_len = system.resource_writes_.size();
        if (added.condition) {
            desc.run_if = &Engine::condition_trampoline;
            desc.run_if_user_data = &added;
        }
        desc.startup = system.startup_;
        desc.event_reads = system.event_reads_.data();
        desc.event_reads_len = system.event_reads_.size();
        desc.event_writes = system.event_writes_.data();
        desc.event_writes_len = system.event_writes_.size();
        desc.sets = sets.data();
        desc.sets_len = sets.size();
        ecs_status status = ecs_system_add(raw_, &desc);
        if (status != ECS_OK) {
            systems_.pop_back();
            check(status, "ecs_system_add");
        }
    }
    void build() { check(ecs_engine_build(raw_), "ecs_engine_build"); }
    // One tick; rethrows the first exception a system's body threw in it.
    void tick() {
        ecs_status status = ecs_engine_tick(raw_);
        if (status != ECS_ERR_WRONG_STATE) {  // busy: no tick ran, nothing to rethrow
            rethrow();
        }
        check(status, "ecs_engine_tick");
    }
    // `ticks` ticks, stopping at the first failure (or exception).
    void run(std::uint64_t ticks) {
        for (std::uint64_t n = 0; n < ticks; ++n) {
            tick();
        }
    }
    std::uint64_t ticks() const {
        std::uint64_t n = 0;
        check(ecs_engine_ticks(raw_, &n), "ecs_engine_ticks");
        return n;
    }
    // The world's checksum over `ids` (see ecs_world_checksum): ids of
    // trivially copyable components only (a boxed one's bytes are a heap
    // address, different in every run).
    std::uint64_t checksum(std::initializer_list<ecs_component_id> ids) const {
        std::uint64_t sum = 0;
        check(ecs_world_checksum(raw_, ids.begin(), ids.size(), &sum), "ecs_world_checksum");
        return sum;
    }
    // The same over typed components, in this order: a boxed one is a
    // compile-time error.
    template <class T, class... Rest>
    std::uint64_t checksum(const Component<T>& first, const Component<Rest>&... rest) const {
        static_assert(!(detail::boxed<T> || ... || detail::boxed<Rest>),
                      "a boxed component's bytes are a heap address, different in every run: "
                      "leave it out of the checksum");
        return checksum({first.id, rest.id...});
    }

    // Saves the engine between ticks (see ecs_engine_save): the entities,
    // the values of the components registered with `ecs::savable`, the
    // hierarchy, the disabled entities, the tick counter and the systems'
    // progress, the resources and the events in flight (of the resources
    // and channels registered with `ecs::savable`), as `format`
    // (ECS_SNAPSHOT_POSTCARD or ECS_SNAPSHOT_JSON); nothing of what the
    // systems' callables capture.
    // The bytes belong to the caller and outlive the engine; the library's
    // buffer is freed (ecs_snapshot_free) before this returns, also when
    // the copy throws. The engine is not changed. Throws `Error`:
    // ECS_ERR_SNAPSHOT when a component or an event channel that is not
    // savable has values (the message names it) or a resource is not
    // savable,
    // ECS_ERR_WRONG_STATE before `build` (or during a tick),
    // ECS_ERR_INVALID_ARGUMENT for an unknown format.
    std::vector<std::uint8_t> save(ecs_snapshot_format format) const {
        std::uint8_t* bytes = nullptr;
        std::size_t len = 0;
        check(ecs_engine_save(raw_, format, &bytes, &len), "ecs_engine_save");
        struct Buffer {
            std::uint8_t* bytes;
            std::size_t len;
            ~Buffer() { ecs_snapshot_free(bytes, len); }
        } buffer{bytes, len};
        return std::vector<std::uint8_t>(buffer.bytes, buffer.bytes + buffer.len);
    }
    // Loads `len` bytes at `bytes`, a snapshot from `save` in `format`,
    // between ticks (see ecs_engine_load): every entity and value is
    // replaced by the snapshot's, then the tick counter and the systems'
    // progress, so the next ticks and spawns go on as in the saved engine.
    // The engine must be built with the same systems, in the same order,
    // and every component with values in the snapshot registered with
    // `ecs::savable` under the same name and size. The bytes are only
    // read; the systems' callables keep what they captured. Throws
    // `Error` (ECS_ERR_SNAPSHOT for bytes that do not load here: corrupt,
    // cut, another format, other components, systems, resources or
    // channels, or a resource not savable; ECS_ERR_WRONG_STATE before `build`; ECS_ERR_NULL_POINTER
    // for a null `bytes` with a `len` above 0), and then the engine is
    // exactly as before and usable.
    void load(ecs_snapshot_format format, const std::uint8_t* bytes, std::size_t len) {
        check(ecs_engine_load(raw_, format, bytes, len), "ecs_engine_load");
    }
    // As `load(format, bytes.data(), bytes.size())`.
    void load(ecs_snapshot_format format, const std::vector<std::uint8_t>& bytes) {
        load(format, bytes.data(), bytes.size());
    }

    // Saves the whole engine into `state` between ticks, replacing what
    // it held (see ecs_engine_save_state): every component value, every
    // resource and event in flight, whether savable or not, as they are
    // in memory; nothing of what the systems' callables capture. Throws
    // `Error` (ECS_ERR_SNAPSHOT naming a component registered with a
    // destructor, ECS_ERR_WRONG_STATE before `build`), and then `state`
    // holds what it held before.
    void save_state(State& state) const {
        check(ecs_engine_save_state(raw_, state.raw()), "ecs_engine_save_state");
    }
    // Makes the engine what it was when `state` was saved, from this
    // engine or one built the same way (see ecs_engine_restore_state).
    // Throws `Error` (ECS_ERR_SNAPSHOT for a state of an engine built
    // another way, ECS_ERR_WRONG_STATE for an empty state or before
    // `build`), and then the engine is exactly as before.
    void restore_state(const State& state) {
        check(ecs_engine_restore_state(raw_, state.raw()), "ecs_engine_restore_state");
    }

private:
    struct Added {
        explicit Added(std::function<void(SystemContext&)> b) : body(std::move(b)) {}
        std::function<void(SystemContext&)> body;
        std::function<void(World&, const ecs_tick&)> exclusive;
        std::function<bool(const SystemContext&)> condition;
        detail::Failure failure;
    };

    static bool condition_trampoline(const ecs_system_ctx* ctx, void* user_data) noexcept {
        auto& added = *static_cast<Added*>(user_data);
        bool verdict = false;
        added.failure.guard([&] {
            // The context is only read through: `read` is const.
            const SystemContext context(const_cast<ecs_system_ctx*>(ctx));
            verdict = added.condition(context);
        });
        return verdict;
    }

    // The C strings of `names`, valid while `names` lives.
    static std::vector<const char*> c_strings(const std::vector<std::string>& names) {
        std::vector<const char*> out;
        out.reserve(names.size());
        for (const std::string& name : names) {
            out.push_back(name.c_str());
        }
        return out;
    }

    template <class T>
    Event<T> register_event(const char* name, bool plain) {
        ecs_event_desc desc{};
        desc.struct_size = sizeof desc;
        desc.name = name;
        desc.size = sizeof(T);
        desc.align = alignof(T);
        desc.savable = plain;
        Event<T> channel;
        check(ecs_event_register(raw_, &desc, &channel.id), "ecs_event_register");
        return channel;
    }

    template <class T>
    Component<T> register_component(const char* name, bool plain, bool track) {
        ecs_component_desc desc{};
        desc.struct_size = sizeof desc;
        desc.name = name;
        desc.size = sizeof(detail::Stored<T>);
        desc.align = alignof(detail::Stored<T>);
        if constexpr (detail::boxed<T>) {
            desc.drop = &detail::delete_box<T>;
        }
        desc.savable = plain;
        desc.flags = track ? ECS_COMPONENT_TRACK_CHANGES : 0;
        Component<T> component;
        check(ecs_component_register(raw_, &desc, &component.id), "ecs_component_register");
        return component;
    }

    template <class T>
    Resource<T> register_resource(const char* name, const T& initial, bool plain) {
        ecs_resource_desc desc{};
        desc.struct_size = sizeof desc;
        desc.name = name;
        desc.size = sizeof(T);
        desc.align = alignof(T);
        desc.initial = &initial;
        desc.savable = plain;
        Resource<T> resource;
        check(ecs_resource_register(raw_, &desc, &resource.id), "ecs_resource_register");
        return resource;
    }

    static void exclusive_trampoline(ecs_engine* engine, const ecs_tick* tick,
                                     void* user_data) noexcept {
        auto& added = *static_cast<Added*>(user_data);
        added.failure.guard([&] {
            World world(engine);
            added.exclusive(world, *tick);
        });
    }
    static void trampoline(ecs_system_ctx* ctx, void* user_data) noexcept {
        auto& added = *static_cast<Added*>(user_data);
        added.failure.guard([&] {
            if (added.body) {
                SystemContext context(ctx);
                added.body(context);
            }
        });
    }
    // Takes every system's exception of the tick (so none is left to skip
    // that system next tick) and rethrows the first, in the order systems
    // were added.
    void rethrow() {
        std::exception_ptr first;
        for (Added& added : systems_) {
            std::exception_ptr error = added.failure.take();
            if (error && !first) {
                first = std::move(error);
            }
        }
        if (first) {
            std::rethrow_exception(first);
        }
    }

    // A deque: an added system's address (its user_data) never moves.
    std::deque<Added> systems_;
};

// Owns a handle to a thread-safe queue of `T` (see ecs_queue_create):
// producers on any thread push, a consumer pops.
template <class T>
class Queue {
    static_assert(std::is_trivially_copyable_v<T>, "events are copied as bytes");

public:
    // `capacity` events at most (0: no limit).
    explicit Queue(std::size_t capacity = 0) {
        ecs_queue_desc desc{};
        desc.struct_size = sizeof desc;
        desc.event_size = sizeof(T);
        desc.capacity = capacity;
        check(ecs_queue_create(&desc, &raw_), "ecs_queue_create");
    }
    ~Queue() { ecs_queue_destroy(raw_); }
    Queue(const Queue&) = delete;
    Queue& operator=(const Queue&) = delete;
    Queue(Queue&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
    Queue& operator=(Queue&& other) noexcept {
        std::swap(raw_, other.raw_);
        return *this;
    }
    // Another handle to the same queue (for another thread).
    Queue clone() const {
        ecs_queue* raw = nullptr;
        check(ecs_queue_clone(raw_, &raw), "ecs_queue_clone");
        return Queue(raw);
    }

    // Waits while a bounded queue is full; throws (ECS_ERR_QUEUE_CLOSED)
    // once closed.
    void push(const T& event) { check(ecs_queue_push(raw_, &event), "ecs_queue_push"); }
    // false when a bounded queue is full.
    bool try_push(const T& event) {
        ecs_status status = ecs_queue_try_push(raw_, &event);
        if (status == ECS_ERR_QUEUE_FULL) {
            return false;
        }
        check(status, "ecs_queue_try_push");
        return true;
    }
    // The oldest event, or nothing when empty; throws once closed and
    // drained.
    std::optional<T> try_pop() {
        T event;
        ecs_status status = ecs_queue_try_pop(raw_, &event);
        if (status == ECS_ERR_QUEUE_EMPTY) {
            return std::nullopt;
        }
        check(status, "ecs_queue_try_pop");
        return event;
    }
    // Waits up to `timeout_ms` for an event: nothing on a timeout; throws
    // once closed and drained.
    std::optional<T> pop_timeout(std::uint64_t timeout_ms) {
        T event;
        ecs_status status = ecs_queue_pop_timeout(raw_, &event, timeout_ms);
        if (status == ECS_ERR_TIMEOUT) {
            return std::nullopt;
        }
        check(status, "ecs_queue_pop_timeout");
        return event;
    }
    void close() { check(ecs_queue_close(raw_), "ecs_queue_close"); }
    std::size_t size() const {
        std::size_t n = 0;
        check(ecs_queue_len(raw_, &n), "ecs_queue_len");
        return n;
    }

private:
    explicit Queue(ecs_queue* raw) noexcept : raw_(raw) {}
    ecs_queue* raw_ = nullptr;
};

}  // namespace ecs

#endif  // ECS_RUNTIME_HPP
