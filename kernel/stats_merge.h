// Merging the stats structs of kernel/results.h: what two parts recorded (two threads of a run,
// as the real platform collects them) as one part recording both would hold. Sums add up,
// histograms merge, the highest peak and the longest sections are kept, what was open at the
// end is listed.
#pragma once

#include "kernel/results.h"

namespace locksim::kernel {

void merge(IntervalStats &into, const IntervalStats &part);
void merge(OpStats &into, const OpStats &part);
void merge(LockStats &into, const LockStats &part);  // the kind stays
void merge(RcuStats &into, const RcuStats &part);
// Live bytes add; the peak is the higher of the two (parts that allocate at different times).
void merge(MemStats &into, const MemStats &part);
void merge(CpuStats &into, const CpuStats &part);

}  // namespace locksim::kernel
