// The real platform (see real_platform.h): its construction and the run, with the collector
// that drains the sample queues and ends it. The topics live beside it (real/platform_state.h lists
// them).
#include "real/real_platform.h"

#include <boost/asio/signal_set.hpp>
#include <condition_variable>
#include <mutex>

#include "real/platform_state.h"
#include "util/sanitizers.h"

namespace locksim::real {

#if LOCKSIM_TSAN
// liburcu is not instrumented: its internal hand-offs (rcu_barrier's completion, the callback
// queue, the grace-period futex) look like races to ThreadSanitizer. What they order for our
// code is annotated in real/urcu.h.
extern "C" const char *__tsan_default_suppressions() {
    return "race:liburcu-memb.so\n"
           "race:liburcu-cds.so\n"
           "race:liburcu-common.so\n"
           "race:urcu_common_wake_up_gp\n";
}
#endif

// ---------------------------------------------------------------- construction, threads

RealPlatform::RealPlatform(RealConfig cfg) : cfg_(std::move(cfg)), ncpus_(0) {
    s_ = std::make_unique<State>(*this, cfg_);
    const int host = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    ncpus_ = cfg_.cpus > 0 ? cfg_.cpus : host;
    s_->kept_poff.keep = s_->kept_ioff.keep = cfg_.keep_longest;
    if (cfg_.checks) {
        s_->pub = cds_lfht_new_flavor(1024, 1024, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
                                      &urcu_memb_flavor, nullptr);
        if (!s_->pub) throw std::runtime_error("cds_lfht_new failed");
    }
}

RealPlatform::~RealPlatform() {
    request_stop();
    std::vector<TaskState *> join;
    {
        std::lock_guard g(s_->mu);
        for (auto &t : s_->tasks)
            if (t->thread.joinable()) join.push_back(t.get());
    }
    for (TaskState *t : join)
        t->thread.join();
    urcu_thread_register();
    urcu_memb_barrier();  // callbacks queued after run() still need the platform
    if (s_->pub) {
        cds_lfht_iter it;
        urcu_memb_read_lock();
        cds_lfht_first(s_->pub, &it);
        while (cds_lfht_node *n = cds_lfht_iter_get_node(&it)) {
            if (!cds_lfht_del(s_->pub, n))
                urcu_memb_call_rcu(&caa_container_of(n, PubNode, node)->rh, pub_free);
            cds_lfht_next(s_->pub, &it);
        }
        urcu_memb_read_unlock();
        urcu_memb_barrier();
        cds_lfht_destroy(s_->pub, nullptr);
    }
    if (tl_ctx.gen == s_->gen) tl_ctx = {};
}

std::unique_ptr<RealPlatform> make_real_platform(RealConfig cfg) {
    return std::make_unique<RealPlatform>(std::move(cfg));
}
void RealPlatform::request_stop() {
    {
        std::lock_guard g(s_->sleep_mu);
        Time unset = -1;
        s_->stop_at.compare_exchange_strong(unset, s_->now());
        stop_.store(true);
    }
    s_->sleep_cv.notify_all();
}

kernel::RunResults RealPlatform::run() {
    namespace asio = boost::asio;
    std::vector<TaskState *> start;
    {
        std::lock_guard g(s_->mu);
        if (s_->started) throw std::logic_error("RealPlatform::run called twice");
        s_->started = true;
        start.swap(s_->pending_start);
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (TaskState *t : start)
        s_->start_thread(t);

    // The collector: drains the sample queues, ends the run after the duration or on a signal.
    asio::io_context io;
    asio::steady_timer end(io, t0 + std::chrono::nanoseconds(cfg_.duration));
    asio::steady_timer tick(io);
    std::optional<asio::signal_set> signals;
    auto finish = [&] {
        request_stop();
        end.cancel();
        tick.cancel();
        if (signals) signals->cancel();
    };
    end.async_wait([&](const boost::system::error_code &ec) {
        if (!ec) finish();
    });
    if (cfg_.handle_signals) {
        signals.emplace(io, SIGINT, SIGTERM);
        signals->async_wait([&](const boost::system::error_code &ec, int) {
            if (ec) return;
            interrupted_.store(true);
            finish();
        });
    }
    std::function<void()> arm = [&] {
        tick.expires_after(std::chrono::milliseconds(2));
        tick.async_wait([&](const boost::system::error_code &ec) {
            if (ec) return;
            s_->drain();
            if (stop_.load())
                finish();
            else
                arm();
        });
    };
    arm();
    io.run();
    const Time ran =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();

    // The drain: join every task (also those started by tasks while we joined) while the work
    // in flight finishes and is recorded; at drain_limit after the stop, recording ends. The
    // sample queues are drained every millisecond meanwhile; the last join wakes us at once.
    std::mutex joined_mu;
    std::condition_variable joined_cv;
    bool joined = false;
    std::thread joiner([&] {
        for (;;) {
            std::vector<TaskState *> join;
            {
                std::lock_guard g(s_->mu);
                for (auto &t : s_->tasks)
                    if (t->thread.joinable()) join.push_back(t.get());
            }
            if (join.empty()) break;
            for (TaskState *t : join)
                t->thread.join();
        }
        std::lock_guard g(joined_mu);
        joined = true;
        joined_cv.notify_one();
    });
    const Time drain_end = s_->stop_at.load() + cfg_.drain_limit;
    {
        std::unique_lock lk(joined_mu);
        while (!joined && s_->now() < drain_end) {
            lk.unlock();
            s_->drain();
            lk.lock();
            joined_cv.wait_for(lk, std::chrono::milliseconds(1), [&] { return joined; });
        }
    }
    s_->end_recording();
    joiner.join();
    urcu_thread_register();
    urcu_memb_barrier();
    s_->drain();
    return s_->collect(ran);
}

bool RealPlatform::drained() const {
    return !s_->recording();
}

}  // namespace locksim::real
