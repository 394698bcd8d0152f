#include "ss/policy_dup.h"

#include <unordered_map>
#include <vector>

#include "ss/work_meter.h"

namespace locksim::ss {
namespace {

// Copies one rule list, inserting each rule into the new table (cond_dup_av_list).
void dup_av_list(const std::vector<AvtabNode *> &from, Avtab &table, std::vector<AvtabNode *> &to) {
    to.reserve(from.size());
    count_work(Work::Alloc);
    for (const AvtabNode *n : from) {
        count_work(Work::BytesCopied, sizeof(AvtabNode));
        to.push_back(table.insert_nonunique(n->key, n->datum));
    }
}

}  // namespace

std::shared_ptr<CondPolicy> cond_policy_dup(const CondPolicy &orig) {
    count_work(Work::Alloc);
    auto copy = std::make_shared<CondPolicy>();
    copy->bools = orig.bools;  // deep copy of the boolean datums
    copy->te_cond_avtab.alloc_dup(orig.te_cond_avtab);
    copy->cond_list.reserve(orig.cond_list.size());
    count_work(Work::Alloc);
    for (const CondNode &node : orig.cond_list) {
        CondNode &n = copy->cond_list.emplace_back();
        n.cur_state = node.cur_state;
        n.expr = node.expr;
        count_work(Work::Alloc);
        count_work(Work::BytesCopied, node.expr.size() * sizeof(CondExpr));
        dup_av_list(node.true_list, copy->te_cond_avtab, n.true_list);
        dup_av_list(node.false_list, copy->te_cond_avtab, n.false_list);
    }
    // Rules the lists do not reference (none in a policy read from a file) are copied too, so
    // the table is complete.
    if (copy->te_cond_avtab.nel() != orig.te_cond_avtab.nel()) {
        std::unordered_map<const AvtabNode *, bool> listed;
        for (const CondNode &node : orig.cond_list) {
            for (const AvtabNode *n : node.true_list)
                listed[n] = true;
            for (const AvtabNode *n : node.false_list)
                listed[n] = true;
        }
        orig.te_cond_avtab.for_each([&](const AvtabNode &n) {
            if (!listed.count(&n)) copy->te_cond_avtab.insert_nonunique(n.key, n.datum);
        });
    }
    return copy;
}

void cond_policydb_dup(Policydb &dst, const Policydb &orig) {
    dst.base = orig.base;
    dst.cond = cond_policy_dup(*orig.cond);
}

Policydb policydb_full_copy(const Policydb &orig) {
    std::vector<uint8_t> image = policydb_write(orig);
    return policydb_read(image, "policy copy");
}

}  // namespace locksim::ss
