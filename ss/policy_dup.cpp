#include "ss/policy_dup.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "ss/te_rules_memo.h"
#include "util/work_meter.h"

namespace locksim::ss {
namespace {

// Copies one rule list, inserting each rule into the new table (cond_dup_av_list): the rules
// are read through the list's array (their addresses known ahead), the copies written.
void dup_av_list(const Avtab &orig, const std::vector<AvtabNode *> &from, Avtab &table,
                 std::vector<AvtabNode *> &to) {
    to.reserve(from.size());
    count_work(Work::Alloc);
    for (const AvtabNode *n : from) {
        count_work(Work::BytesCopied, sizeof(AvtabNode));
        orig.touch_node(*n, Access::Independent);
        to.push_back(table.insert_nonunique(n->key, n->datum));
        table.touch_node(*to.back(), Access::Written);
    }
}

// Where the simulator's memo of TE-rule searches is installed (te_rules_memo.h), a copy that
// repeats its original's tables node for node says so (Avtab::adopt_layout), so that the memo's
// entries serve it. Host bookkeeping, not counted, and skipped where the host's time is what is
// measured (no memo there).
bool memo_installed() {
    return ThreadSlot<TeRulesMemo>::current != nullptr;
}

}  // namespace

std::shared_ptr<CondPolicy> cond_policy_dup(const CondPolicy &orig) {
    count_work(Work::Alloc);
    auto copy = std::make_shared<CondPolicy>();
    copy->bools = orig.bools;  // deep copy of the boolean datums
    copy->te_cond_avtab.alloc_dup(orig.te_cond_avtab);
    copy->cond_list.reserve(orig.cond_list.size());
    count_work(Work::Alloc);
    using Part = CondPolicy::Part;
    for (size_t i = 0; i < orig.cond_list.size(); ++i) {
        const CondNode &node = orig.cond_list[i];
        orig.touch_node(i, Access::Independent);
        CondNode &n = copy->cond_list.emplace_back();
        copy->touch_node(i, Access::Written);
        n.cur_state = node.cur_state;
        n.expr = node.expr;
        count_work(Work::Alloc);
        count_work(Work::BytesCopied, node.expr.size() * sizeof(CondExpr));
        const size_t expr_bytes = node.expr.size() * sizeof(CondExpr);
        orig.touch_part(i, Part::Expr, expr_bytes, Access::Independent);
        copy->touch_part(i, Part::Expr, expr_bytes, Access::Written);
        orig.touch_part(i, Part::TrueList, node.true_list.size() * sizeof(AvtabNode *),
                        Access::Independent);
        dup_av_list(orig.te_cond_avtab, node.true_list, copy->te_cond_avtab, n.true_list);
        copy->touch_part(i, Part::TrueList, n.true_list.size() * sizeof(AvtabNode *),
                         Access::Written);
        orig.touch_part(i, Part::FalseList, node.false_list.size() * sizeof(AvtabNode *),
                        Access::Independent);
        dup_av_list(orig.te_cond_avtab, node.false_list, copy->te_cond_avtab, n.false_list);
        copy->touch_part(i, Part::FalseList, n.false_list.size() * sizeof(AvtabNode *),
                         Access::Written);
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
    if (memo_installed()) copy->te_cond_avtab.adopt_layout(orig.te_cond_avtab);
    return copy;
}

void cond_policydb_dup(Policydb &dst, const Policydb &orig) {
    dst.base = orig.base;
    dst.cond = cond_policy_dup(*orig.cond);
}

Policydb policydb_full_copy(const Policydb &orig) {
    uint32_t image_lines = 0;
    std::vector<uint8_t> image = policydb_write(orig, 0, &image_lines);
    Policydb copy = policydb_read(image, "policy copy", nullptr, image_lines);
    if (memo_installed()) {
        WorkMeterScope uncounted(nullptr);
        const PolicyBase &a = copy.b(), &b = orig.b();
        // The TE searches walk the types' attribute maps as well as the tables.
        const bool same_maps =
            a.type_attr_map.size() == b.type_attr_map.size() &&
            std::equal(a.type_attr_map.begin(), a.type_attr_map.end(), b.type_attr_map.begin(),
                       [](const Ebitmap &x, const Ebitmap &y) { return ebitmap_cmp(x, y); });
        if (same_maps) a.te_avtab.adopt_layout(b.te_avtab);
        copy.cond->te_cond_avtab.adopt_layout(orig.cond->te_cond_avtab);
    }
    return copy;
}

}  // namespace locksim::ss
