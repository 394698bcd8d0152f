// The real platform's tasks: host threads, their time, identity and sleep.
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "real/platform_state.h"

namespace locksim::real {

void RealPlatform::State::thread_main(TaskState *t) {
    tl_ctx = {gen, t};
    urcu_thread_register();
    t->stats = &stats.local();
    // A sleep ends when it is due, as the simulator's does: Linux gives a SCHED_OTHER thread
    // 50 us of timer slack, which made every 5 us poll of percpu-rwsem's writer (kernel/
    // percpu_rwsem.h) a sleep of 55 us or more. The workloads draw their timer slack
    // themselves (`jitter`), on both platforms.
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    const unsigned host = std::max(1u, std::thread::hardware_concurrency());
    if (cfg.pin && (t->params.cpu >= 0 || !t->params.cpus.empty())) {
        cpu_set_t set;
        CPU_ZERO(&set);
        if (t->params.cpu >= 0)
            CPU_SET(static_cast<unsigned>(t->params.cpu) % host, &set);
        else
            for (int c : t->params.cpus)
                CPU_SET(static_cast<unsigned>(c) % host, &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    if (t->params.policy != kernel::Sched::Other && cfg.fifo) {
        const bool rr = t->params.policy == kernel::Sched::Rr;
        sched_param sp{};
        sp.sched_priority = std::clamp(t->params.priority, 1, 99);
        if (int rc = pthread_setschedparam(pthread_self(), rr ? SCHED_RR : SCHED_FIFO, &sp)) {
            std::lock_guard g(mu);
            fifo_note = fmt::format("{} not permitted ({}): those tasks ran SCHED_OTHER",
                                    rr ? "SCHED_RR" : "SCHED_FIFO",
                                    rc == EPERM ? "EPERM" : std::to_string(rc));
        }
    } else if (t->params.nice != 0) {
        // A thread's nice level (Linux: per thread, by its id). Lowering it needs privilege;
        // where it is refused the thread keeps nice 0, which the note says.
        if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), t->params.nice) != 0) {
            std::lock_guard g(mu);
            fifo_note =
                fmt::format("nice {} not permitted: those tasks ran at nice 0", t->params.nice);
        }
    }
    kernel::PlatformScope scope(p);
    try {
        t->body();
    } catch (const std::exception &e) {
        violation(t, "task_exception", fmt::format("{} threw: {}", t->name, e.what()));
    }
    fold_bytes(*t);
    if (t->atomic() || !t->held.empty() || t->rcu_nesting > 0)
        violation(t, "lock_held_at_exit",
                  fmt::format("{} exited with {} lock(s) held, preempt count {}, rcu nesting {}",
                              t->name, t->held.size(), t->preempt_count, t->rcu_nesting));
    const HostClock clock = HostClock::now();
    t->cpu_time = clock.cpu_ns;
    t->switches = clock.voluntary_switches + clock.involuntary_switches;
    t->last_cpu = cpu_now();
    t->body = nullptr;
    t->timer.reset();
    t->io.reset();
}

void RealPlatform::State::start_thread(TaskState *t) {
    t->thread = std::thread([this, t] { thread_main(t); });
}

void RealPlatform::create_task(kernel::TaskParams params, std::function<void()> body) {
    TaskState *t;
    {
        std::lock_guard g(s_->mu);
        t = s_->new_task(std::move(params));
        t->body = std::move(body);
        if (!s_->started) {
            s_->pending_start.push_back(t);
            return;
        }
    }
    s_->start_thread(t);  // created by a running task: it runs at once
}

// ---------------------------------------------------------------- time, identity

Time RealPlatform::now() {
    return s_->now();
}

int RealPlatform::smp_processor_id() {
    return s_->cpu_now();
}

kernel::TaskInfo RealPlatform::current_task() {
    TaskState &t = s_->me();
    return {t.id, t.name};
}

uint64_t RealPlatform::get_random_u64() {
    return s_->me().rng();
}

void RealPlatform::sleep_until(Time until, Site site) {
    TaskState &t = s_->me();
    s_->check_sleep(t, site);
    if (t.params.probe) {
        // The probe: a steady_timer on the task's own io_context; how late it woke is recorded.
        if (!t.io) {
            t.io = std::make_unique<boost::asio::io_context>();
            t.timer = std::make_unique<boost::asio::steady_timer>(*t.io);
        }
        t.timer->expires_at(s_->epoch + std::chrono::nanoseconds(until));
        t.timer->async_wait([](const boost::system::error_code &) {});
        t.io->restart();
        t.io->run_one();
        const Time late = s_->now() - until;
        const Time stop = s_->stop_at.load();
        if (stop >= 0 && until > stop) return;  // due after the stop: not counted
        if (s_->recording()) {
            t.stats->wakeup[t.name].record(std::max<Time>(late, 0));
        } else if (auto open = s_->open_part(until)) {
            t.stats->wakeup[t.name].record(*open);
            t.stats->wakeup_open[t.name] = *open;
        }
        return;
    }
    std::unique_lock lk(s_->sleep_mu);
    s_->sleep_cv.wait_until(lk, s_->epoch + std::chrono::nanoseconds(until),
                            [&] { return stop_.load(); });
}

void RealPlatform::cond_resched(Site site) {
    s_->check_sleep(s_->me(), site);
}

}  // namespace locksim::real
