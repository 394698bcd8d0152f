#include "util/work_meter.h"

namespace locksim {
namespace {
thread_local uint32_t tl_objects = 0, tl_ebitmap_nodes = 0;
thread_local int tl_scope_depth = 0;
}  // namespace

uint32_t next_line_object() {
    return ++tl_objects;
}

uint32_t next_ebitmap_node() {
    return ++tl_ebitmap_nodes;
}

LineObjectScope::LineObjectScope()
    : saved_(tl_objects), saved_nodes_(tl_ebitmap_nodes), outermost_(tl_scope_depth++ == 0) {
    if (outermost_) tl_objects = tl_ebitmap_nodes = 0;
}

LineObjectScope::~LineObjectScope() {
    --tl_scope_depth;
    if (outermost_) tl_objects = saved_, tl_ebitmap_nodes = saved_nodes_;
}

void touch_stream([[maybe_unused]] uint32_t object, [[maybe_unused]] uint64_t offset,
                  [[maybe_unused]] uint64_t bytes, [[maybe_unused]] Access access) {
#ifndef LOCKSIM_NO_WORK_METER
    WorkCounts *c = ThreadSlot<WorkCounts>::current;
    if (!c || !c->records_lines() || bytes == 0) return;
    for (uint64_t line = offset / 64, last = (offset + bytes - 1) / 64; line <= last; ++line)
        touch_line(mem_line(MemRegion::Stream, object, line), access);
#endif
}

}  // namespace locksim
