// Every primitive of the kernel API, for code written against all of it: the strategies (through
// strategies/strategy.h and the headers it includes) and the workloads (workloads/workload.h).
// Code that uses a few primitives includes their headers instead.
#pragma once

#include "kernel/mutex.h"
#include "kernel/platform.h"
#include "kernel/preempt.h"
#include "kernel/rcu.h"
#include "kernel/rwlock.h"
#include "kernel/rwsem.h"
#include "kernel/spinlock.h"
