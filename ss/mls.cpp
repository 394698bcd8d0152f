// The MLS part of new and converted contexts (the kernel's mls.c); the validity checks are in
// policydb.cpp.
#include "ss/mls.h"

#include <algorithm>
#include <cerrno>

namespace locksim::ss {

void mls_context_cpy(Context &dst, const Context &src) {
    dst.range.level[0] = src.range.level[0];
    dst.range.level[1] = src.range.level[1];
}

void mls_context_cpy_low(Context &dst, const Context &src) {
    dst.range.level[0] = src.range.level[0];
    dst.range.level[1] = src.range.level[0];
}

void mls_context_cpy_high(Context &dst, const Context &src) {
    dst.range.level[0] = src.range.level[1];
    dst.range.level[1] = src.range.level[1];
}

int mls_range_glblub(MlsRange &dst, const MlsRange &r1, const MlsRange &r2) {
    if (r1.level[1].sens < r2.level[0].sens || r2.level[1].sens < r1.level[0].sens)
        return -EINVAL;  // no sensitivity in common
    dst.level[0].sens = std::max(r1.level[0].sens, r2.level[0].sens);
    dst.level[1].sens = std::min(r1.level[1].sens, r2.level[1].sens);
    dst.level[0].cat = ebitmap_and(r1.level[0].cat, r2.level[0].cat);
    dst.level[1].cat = ebitmap_and(r1.level[1].cat, r2.level[1].cat);
    return 0;
}

int mls_compute_sid(const PolicyBase &p, const Context &scontext, const Context &tcontext,
                    uint32_t tclass, uint32_t specified, Context &newcontext, bool sock) {
    if (!p.mls) return 0;
    switch (specified) {
        case AVTAB_TRANSITION: {
            if (const MlsRange *r = p.range_trans_search(scontext.type, tcontext.type, tclass)) {
                newcontext.range.level[0] = r->level[0];
                newcontext.range.level[1] = r->level[1];
                return 0;
            }
            uint32_t default_range = 0;
            if (const ClassDatum *cls = tclass ? p.classes.by_value(tclass) : nullptr)
                default_range = cls->default_range;
            switch (default_range) {
                case DEFAULT_SOURCE_LOW:
                    mls_context_cpy_low(newcontext, scontext);
                    return 0;
                case DEFAULT_SOURCE_HIGH:
                    mls_context_cpy_high(newcontext, scontext);
                    return 0;
                case DEFAULT_SOURCE_LOW_HIGH:
                    mls_context_cpy(newcontext, scontext);
                    return 0;
                case DEFAULT_TARGET_LOW:
                    mls_context_cpy_low(newcontext, tcontext);
                    return 0;
                case DEFAULT_TARGET_HIGH:
                    mls_context_cpy_high(newcontext, tcontext);
                    return 0;
                case DEFAULT_TARGET_LOW_HIGH:
                    mls_context_cpy(newcontext, tcontext);
                    return 0;
                case DEFAULT_GLBLUB:
                    return mls_range_glblub(newcontext.range, scontext.range, tcontext.range);
                default:
                    break;
            }
            [[fallthrough]];
        }
        case AVTAB_CHANGE:
            if (tclass == p.process_class || sock)
                mls_context_cpy(newcontext, scontext);  // the process's whole range
            else
                mls_context_cpy_low(newcontext, scontext);  // its effective (low) level
            return 0;
        case AVTAB_MEMBER:
            mls_context_cpy_low(newcontext, scontext);
            return 0;
        default:
            return -EINVAL;
    }
}

int mls_setup_user_range(const PolicyBase &p, const Context &fromcon, const UserDatum &user,
                         Context &usercon) {
    if (!p.mls) return 0;
    const MlsLevel &from_sen = fromcon.range.level[0];
    const MlsLevel &from_clr = fromcon.range.level[1];
    const MlsLevel &user_low = user.range.level[0];
    const MlsLevel &user_clr = user.range.level[1];
    const MlsLevel &user_def = user.dfltlevel;
    MlsLevel &sen = usercon.range.level[0];
    MlsLevel &clr = usercon.range.level[1];

    // Honour the user's default level where the caller's range allows it.
    if (mls_level_between(user_def, from_sen, from_clr))
        sen = user_def;
    else if (mls_level_between(from_sen, user_def, user_clr))
        sen = from_sen;
    else if (mls_level_between(from_clr, user_low, user_def))
        sen = user_low;
    else
        return -EINVAL;

    // Lower the clearance to the caller's when the caller's is lower.
    if (mls_level_dom(user_clr, from_clr))
        clr = from_clr;
    else if (mls_level_dom(from_clr, user_clr))
        clr = user_clr;
    else
        return -EINVAL;
    return 0;
}

int mls_convert_context(const PolicyBase &oldp, const PolicyBase &newp, Context &c) {
    if (!oldp.mls || !newp.mls) return 0;
    for (MlsLevel &l : c.range.level) {
        const LevelDatum *lev = newp.levels.find(oldp.levels.name_of(l.sens));
        if (!lev) return -EINVAL;
        l.sens = lev->level.sens;
        Ebitmap cats;
        for (uint32_t bit : l.cat.bits()) {
            const CatDatum *cat = newp.cats.find(oldp.cats.name_of(bit + 1));
            if (!cat) return -EINVAL;
            cats.set_bit(cat->value - 1, true);
        }
        l.cat = std::move(cats);
    }
    return 0;
}

}  // namespace locksim::ss
